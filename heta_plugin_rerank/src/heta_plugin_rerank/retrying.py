"""Which Cohere failures are worth another try.

The ``cohere`` client's own retries are off (``max_retries=0``); retries go through
``heta_framework.common.retry`` so every provider behaves the same.
"""

from __future__ import annotations

import httpx
from cohere.core.api_error import ApiError
from heta_framework.common.remote import is_retryable_status


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TransportError):  # time-outs, refused or dropped connections
        return True
    return isinstance(exc, ApiError) and is_retryable_status(exc.status_code)


def response_headers(exc: BaseException) -> dict[str, str] | None:
    """The headers of the failed response (Cohere's ApiError carries them itself)."""
    return getattr(exc, "headers", None)
