"""Which Cohere failures are worth another try, and the server's Retry-After.

The ``cohere`` client's own retries are off (``max_retries=0``); retries go through
``heta_framework.common.retry`` so every provider behaves the same.
"""

from __future__ import annotations

import asyncio

import httpx
from cohere.core.api_error import ApiError

RETRYABLE_STATUS = frozenset({408, 429})


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TransportError):  # time-outs, refused or dropped connections
        return True
    if isinstance(exc, ApiError) and exc.status_code is not None:
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's Retry-After in seconds when it is a plain number (an HTTP date is ignored)."""
    headers = {k.lower(): v for k, v in (getattr(exc, "headers", None) or {}).items()}
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        if (seconds := headers.get("retry-after")) is not None:
            return max(0.0, float(seconds))
    except ValueError:
        return None
    return None


class RetryAfterGate:
    """Holds the next attempt back until the server's Retry-After has passed."""

    def __init__(self, cap: float):
        self.cap = cap
        self.not_before = 0.0

    async def wait(self) -> None:
        remaining = self.not_before - asyncio.get_running_loop().time()
        if remaining > 0:
            await asyncio.sleep(remaining)

    def note(self, exc: BaseException) -> None:
        seconds = retry_after_seconds(exc)
        if seconds is not None:
            self.not_before = asyncio.get_running_loop().time() + min(seconds, self.cap)
