"""``JsonLlmCaller``: one validated JSON answer per subject, robustly.

- at most ``concurrency`` calls in flight (``ConcurrencyLimiter``);
- rate limits (429), server errors (5xx) and time-outs are retried with
  exponential backoff; when they persist the outcome is ``call_failed``, never
  an exception, so the step records an issue and the build goes on;
- an answer that is not JSON or fails validation is asked again with the
  validation error in the prompt, up to ``max_attempts`` tries;
- every outcome but a failed call is cached (``LlmCache``); statistics go to
  ``context.count``: ``llm_calls``, ``prompt_tokens``, ``completion_tokens``,
  ``cache_hits``.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import attrs
from heta_framework.common.models import Message
from heta_framework.common.retry import ConcurrencyLimiter, RetryPolicy, call_with_retries
from heta_framework.errors import ModelError

from heta_plugin_graph.llm.cache import CachedAnswer, LlmCache, StateLlmCache, cache_key

log = logging.getLogger(__name__)
T = TypeVar("T")

#: returns None when the value is acceptable, else a message saying what is wrong
Validator = Callable[[Any], str | None]

_RETRYABLE_NAMES = ("Timeout", "RateLimit", "APIConnection", "InternalServer", "ServiceUnavailable")


def is_retryable(exc: BaseException) -> bool:
    """Rate limits, server errors, time-outs and dropped connections are worth another try.

    A ``ModelError`` is a provider's final word: providers such as heta-plugin-openai
    retry 429/5xx/time-outs themselves and raise it only after their last attempt,
    so retrying it here would multiply the attempts.
    """
    if isinstance(exc, ModelError):
        return False
    if isinstance(exc, (TimeoutError, asyncio.TimeoutError, ConnectionError)):
        return True
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):
        return status in (408, 409, 429) or status >= 500
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if any(name in type(current).__name__ for name in _RETRYABLE_NAMES):
            return True
        current = current.__cause__
    return False


@attrs.frozen
class LlmOutcome:
    status: str  # "valid", "invalid" (bad output after every try) or "call_failed" (transport, after retries)
    value: Any = None
    error: str = ""
    attempts: int = 0
    cached: bool = False


def parse_json(text: str) -> Any:
    """The JSON in a model's answer; tolerates a Markdown code fence around it."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return json.loads(stripped)


class JsonLlmCaller:
    def __init__(
        self,
        client: Any,
        *,
        counter: Callable[[str, int], None],
        cache: LlmCache | StateLlmCache | None,
        prompt_version: str,
        concurrency: int = 8,
        max_attempts: int = 3,
        timeout: float = 300.0,
        retry: RetryPolicy = RetryPolicy(max_attempts=4, initial_delay=0.5, max_delay=8.0),
    ):
        self.client = client
        self.model_name = getattr(client, "model_name", type(client).__name__)
        self._count = counter
        self.cache = cache
        self.prompt_version = prompt_version
        self.limiter = ConcurrencyLimiter(concurrency)
        self.max_attempts = max_attempts
        self.timeout = timeout
        self.retry = retry

    async def _complete_once(self, messages: Sequence[Message], schema: Mapping[str, Any], in_flight: list) -> Any:
        async with self.limiter:
            self._count("llm_calls", 1)
            # a last-resort bound for providers without their own time-out; TimeoutError is retried
            request = asyncio.ensure_future(
                asyncio.wait_for(self.client.complete(messages, json_schema=schema, temperature=0.0), self.timeout)
            )
            in_flight[:] = [request]
            # shielded: if the build is interrupted, the answer being computed is still collected (see call)
            completion = await asyncio.shield(request)
            in_flight.clear()
            return completion

    async def _keep_interrupted(self, key: str, in_flight: list, validate: Validator, attempt: int) -> None:
        """The build was interrupted while a call was in flight: wait for that answer and cache it.

        The model is already working on it (and will bill it); keeping it means a
        resumed build does not ask again. Calls still waiting for a slot are not made.
        """
        if not in_flight or self.cache is None:
            return
        try:
            completion = await asyncio.wait_for(asyncio.shield(in_flight[0]), self.timeout)
            value = parse_json(getattr(completion, "text", "") or "")
            if not validate(value):
                self._store(key, CachedAnswer("valid", value, "", attempt))
        except BaseException:  # noqa: BLE001 — best effort while being cancelled
            in_flight[0].cancel()

    async def call(
        self,
        *,
        kind: str,
        subject_text: str,
        messages: Sequence[Message],
        schema: Mapping[str, Any],
        validate: Validator,
    ) -> LlmOutcome:
        key = self.key(kind, subject_text, schema)
        if (hit := self.cached(key)) is not None:
            return hit
        conversation = list(messages)
        error = ""
        in_flight: list = []
        for attempt in range(1, self.max_attempts + 1):
            try:
                completion = await call_with_retries(
                    lambda conversation=conversation: self._complete_once(conversation, schema, in_flight),
                    policy=self.retry,
                    is_retryable=is_retryable,
                    describe=f"{kind} call to {self.model_name}",
                )
            except asyncio.CancelledError:
                await self._keep_interrupted(key, in_flight, validate, attempt)
                raise
            except Exception as exc:  # after retries: an issue for the step, never a crashed build
                log.warning("%s call to %s failed for good: %s", kind, self.model_name, type(exc).__name__)
                return LlmOutcome("call_failed", error=f"{type(exc).__name__}: {exc}"[:500], attempts=attempt)
            self._count("prompt_tokens", int(getattr(completion, "prompt_tokens", 0) or 0))
            self._count("completion_tokens", int(getattr(completion, "completion_tokens", 0) or 0))
            text = getattr(completion, "text", "") or ""
            try:
                value = parse_json(text)
                error = validate(value) or ""
            except ValueError as exc:
                value, error = None, f"the answer is not valid JSON ({exc})"
            if not error:
                self._store(key, CachedAnswer("valid", value, "", attempt))
                return LlmOutcome("valid", value, "", attempt)
            conversation = [
                *messages,
                Message("assistant", text[:4000]),
                Message(
                    "user",
                    f"Your answer was invalid: {error}. Answer again with JSON that follows the schema exactly."
                    " 你的回答无效，请严格按照 JSON schema 重新回答。",
                ),
            ]
        self._store(key, CachedAnswer("invalid", None, error, self.max_attempts))
        return LlmOutcome("invalid", error=error, attempts=self.max_attempts)

    def key(self, kind: str, subject_text: str, schema: Mapping[str, Any]) -> str:
        """The cache key of a question: the model, the prompt version, what it is about and the schema asked for."""
        return cache_key(self.model_name, self.prompt_version, kind, subject_text + "\x1e" + json.dumps(schema, sort_keys=True))

    def cached(self, key: str) -> LlmOutcome | None:
        """The answer the cache holds for ``key`` (counted as a cache hit), or ``None``."""
        if self.cache is None or (hit := self.cache.get(key)) is None:
            return None
        self._count("cache_hits", 1)
        return LlmOutcome(hit.status, hit.value, hit.error, hit.attempts, cached=True)

    def keep(self, key: str, outcome: LlmOutcome) -> None:
        """Cache an outcome made elsewhere (a worker with no cache): answers, valid or not, never a failed call."""
        if outcome.status != "call_failed":
            self._store(key, CachedAnswer(outcome.status, outcome.value, outcome.error, outcome.attempts))

    def _store(self, key: str, answer: CachedAnswer) -> None:
        if self.cache is not None:
            self.cache.put(key, answer)


async def gather_calls(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """``asyncio.gather`` that, when interrupted, lets every call wind down first.

    Plain ``gather`` returns as soon as one child is cancelled; the answers still
    in flight would then be lost instead of cached (see ``JsonLlmCaller.call``).
    """
    results = await asyncio.gather(*awaitables, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results
