"""Which Cohere failures are worth another try.

The ``cohere`` client's own retries are off (``max_retries=0``); retries go through
``heta_framework.common.retry`` so every provider behaves the same.
"""

from __future__ import annotations

from typing import Any

import httpx
from cohere.core.api_error import ApiError
from heta_framework.common.remote import MalformedResponseError, describe_body, is_retryable_status
from heta_framework.common.validators import is_number, is_whole_number


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TransportError | MalformedResponseError):  # time-outs, lost connections, broken answers
        return True
    return isinstance(exc, ApiError) and is_retryable_status(exc.status_code)


def response_headers(exc: BaseException) -> dict[str, str] | None:
    """The headers of the failed response (Cohere's ApiError carries them itself)."""
    return getattr(exc, "headers", None)


def checked_results(response: Any) -> list[tuple[int, float]]:
    """``(index, relevance score)`` pairs of a rerank response, or ``MalformedResponseError``."""
    results = getattr(response, "results", None)
    if not isinstance(results, list):
        raise MalformedResponseError("JSON without a results list")
    scored = []
    for item in results:
        index, score = getattr(item, "index", None), getattr(item, "relevance_score", None)
        if not is_whole_number(index) or not is_number(score):
            raise MalformedResponseError(f"a result whose index/relevance_score are not numbers ({index!r}, {score!r})")
        scored.append((int(index), float(score)))
    return scored


def as_malformed(exc: BaseException) -> MalformedResponseError | None:
    """The ``MalformedResponseError`` a client failure really is, if it is one.

    The ``cohere`` client raises ``ApiError`` with a 2xx status when the body is not JSON, and
    ``TypeError``/``ValueError`` while building its models from JSON of another shape.
    """
    if isinstance(exc, ApiError) and exc.status_code is not None and 200 <= exc.status_code < 300:
        return MalformedResponseError(describe_body(exc.body))
    if isinstance(exc, TypeError | ValueError):
        return MalformedResponseError(f"JSON of another shape ({type(exc).__name__})")
    return None
