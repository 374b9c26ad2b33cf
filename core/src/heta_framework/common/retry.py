"""Retries with exponential backoff and bounded concurrency for model and API calls.

Providers (OpenAI, Cohere, ...) and LLM-driven steps share this one policy so
that every remote call behaves the same: at most ``concurrency`` calls in
flight, retry on rate limits, server errors and time-outs, then give up with an
error that says what to do.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import attrs

T = TypeVar("T")
log = logging.getLogger(__name__)


@attrs.frozen
class RetryPolicy:
    max_attempts: int = 4
    initial_delay: float = 0.5
    max_delay: float = 8.0
    multiplier: float = 2.0
    jitter: float = 0.1

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        base = min(self.max_delay, self.initial_delay * self.multiplier ** (attempt - 1))
        return base * (1 + random.uniform(-self.jitter, self.jitter))


async def call_with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    policy: RetryPolicy,
    is_retryable: Callable[[BaseException], bool],
    describe: str = "call",
) -> T:
    """Run ``call`` until it succeeds, a non-retryable error occurs, or attempts run out."""
    attempt = 1
    while True:
        try:
            return await call()
        except Exception as exc:
            if attempt >= policy.max_attempts or not is_retryable(exc):
                raise
            wait = policy.delay(attempt)
            log.warning("%s failed (%s); retry %d/%d in %.2fs", describe, type(exc).__name__, attempt, policy.max_attempts - 1, wait)
            await asyncio.sleep(wait)
            attempt += 1


class ConcurrencyLimiter:
    """An ``async with`` gate allowing at most ``limit`` concurrent calls; records the peak."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError(f"concurrency must be at least 1, got {limit}")
        self.limit = limit
        self._semaphore = asyncio.Semaphore(limit)
        self.in_flight = 0
        self.peak = 0

    async def __aenter__(self) -> None:
        await self._semaphore.acquire()
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    async def __aexit__(self, *exc_info: object) -> None:
        self.in_flight -= 1
        self._semaphore.release()
