"""What every provider that calls a remote API shares: option parsing, retry options, Retry-After.

OpenAI-compatible servers, Cohere and any future provider read their
``options`` table through ``parse_model_options`` (unknown keys are errors that
list the known ones), inherit ``RemoteCallOptions`` for concurrency, time-outs
and back-off, and honour a server's ``Retry-After`` through ``RetryAfterGate``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from heta_framework.common.retry import RetryPolicy
from heta_framework.common.validators import is_number, number, whole_number
from heta_framework.errors import ModelError

O = TypeVar("O")

#: besides every 5xx: request time-out and rate limit
RETRYABLE_STATUS = frozenset({408, 429})


def is_retryable_status(status: int | None) -> bool:
    return status is not None and (status in RETRYABLE_STATUS or status >= 500)


class MalformedResponseError(Exception):
    """The server answered 2xx, but not with the JSON its API defines: an HTML page (a proxy's
    error page, a wrong ``base_url``), truncated JSON, or JSON of another shape.

    Providers retry it like a 5xx (gateways and overloaded servers produce these now and
    then) and, when attempts run out, raise a ``ModelError`` that says to check ``base_url``.
    """


def describe_body(value: Any) -> str:
    """What came back instead of the API's JSON, for an error message (at most 80 characters of it)."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        kind = "an HTML page" if value.lstrip()[:1] == "<" else "text that is not JSON"
        return f"{kind} ({value.strip()[:80]!r})"
    return f"JSON of another shape ({type(value).__name__})"


# Model options follow the recipe rule (heta_framework.common.validators): never coerced, so
# `batch_size = true` is not 1 and `150.9` is not 150; an int where a float is expected is fine.

#: a whole number of at least 1, or unset
positive_count = whole_number(1, optional=True)
#: a number greater than 0, or unset
positive = number(above=0, optional=True)
non_negative = number(minimum=0)


def to_float(value: Any) -> Any:
    """``5`` -> ``5.0``; anything that is not a number is left for the validator to refuse."""
    return float(value) if is_number(value) else value


def optional(convert: Any) -> Any:
    return lambda value: None if value is None else convert(value)


def parse_model_options(cls: type[O], model_name: str, options: Mapping[str, Any], docs: str) -> O:
    """Build ``cls`` from a model's ``options`` table; a typo is an error naming the known keys."""
    known = {a.name for a in attrs.fields(cls)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ModelError(
            f"Unknown option(s) {', '.join(map(repr, unknown))} for {model_name}. "
            f"Known options: {', '.join(sorted(known))} (see {docs})."
        )
    try:
        return cls(**dict(options))
    except (TypeError, ValueError) as exc:
        raise ModelError(f"Invalid options for {model_name}: {exc}. Fix the model's options table in the recipe.") from None


@attrs.frozen
class RemoteCallOptions:
    """Concurrency, time-out and retry options of a remote model API."""

    #: at most this many requests of one client in flight at once
    concurrency: int = attrs.field(default=8, validator=positive_count)
    #: seconds one HTTP attempt may take before it counts as a time-out
    timeout: float = attrs.field(default=60.0, converter=to_float, validator=positive)
    #: attempts per call, the first included; 1 means no retries
    max_attempts: int = attrs.field(default=4, validator=positive_count)
    #: first back-off delay in seconds; doubles per retry up to retry_max_delay
    retry_initial_delay: float = attrs.field(default=0.5, converter=to_float, validator=non_negative)
    retry_max_delay: float = attrs.field(default=8.0, converter=to_float, validator=non_negative)
    #: the longest Retry-After (seconds) we are willing to honour
    max_retry_after: float = attrs.field(default=60.0, converter=to_float, validator=non_negative)

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(max_attempts=self.max_attempts, initial_delay=self.retry_initial_delay, max_delay=self.retry_max_delay)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """A response's ``Retry-After`` (or ``retry-after-ms``) in seconds, when it is a plain number.

    An HTTP date is ignored: our own back-off is good enough then.
    """
    if not headers:
        return None
    lowered = {k.lower(): v for k, v in headers.items()}
    try:
        if (ms := lowered.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        if (seconds := lowered.get("retry-after")) is not None:
            return max(0.0, float(seconds))
    except ValueError:
        return None
    return None


class RetryAfterGate:
    """Holds the next attempt of one call back until the server's Retry-After has passed (capped)."""

    def __init__(self, cap: float):
        self.cap = cap
        self.not_before = 0.0

    async def wait(self) -> None:
        remaining = self.not_before - asyncio.get_running_loop().time()
        if remaining > 0:
            await asyncio.sleep(remaining)

    def note(self, headers: Mapping[str, str] | None) -> None:
        seconds = retry_after_seconds(headers)
        if seconds is not None:
            self.not_before = asyncio.get_running_loop().time() + min(seconds, self.cap)
