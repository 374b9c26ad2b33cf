"""One model's connection: a lazily created ``AsyncOpenAI`` per event loop, bounded
concurrency, our retries with back-off, and errors that say what to do.

The ``openai`` client's own retries are off (``max_retries=0``) so that every
provider retries the same way (``heta_framework.common.retry``). Clients and
concurrency gates are kept per event loop because the sync facade runs each call
in a fresh ``asyncio.run`` loop, and an httpx pool or a semaphore must not cross loops.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import anyio
import openai
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.common.remote import MalformedResponseError, RetryAfterGate, describe_body, is_retryable_status
from heta_framework.common.retry import ConcurrencyLimiter, call_with_retries
from heta_framework.common.secrets import redact
from heta_framework.common.tracing import trace_headers
from heta_framework.errors import ModelError, ModelTimeoutError

from heta_plugin_openai.credentials import resolve_api_key
from heta_plugin_openai.options import OpenAIOptions

T = TypeVar("T")


def require_fields(response: Any, expected: type, fields: tuple[str, ...]) -> Any:
    """``response`` if it is an ``expected`` with each of ``fields`` a list, else ``MalformedResponseError``.

    The ``openai`` client hands back the raw text for a non-JSON content type and builds models
    without validation, so a wrong answer would surface later as ``AttributeError``/``TypeError``.
    """
    if not isinstance(response, expected):
        raise MalformedResponseError(describe_body(response))
    missing = [name for name in fields if not isinstance(getattr(response, name, None), list)]
    if missing:
        raise MalformedResponseError(f"JSON without {', '.join(missing)}")
    return response


def is_retryable(exc: BaseException) -> bool:
    """Rate limits, server errors, malformed answers, time-outs and lost connections are worth another try."""
    if isinstance(exc, openai.APIConnectionError | MalformedResponseError):  # includes APITimeoutError
        return True
    return isinstance(exc, openai.APIStatusError) and is_retryable_status(exc.status_code)


def response_headers(exc: BaseException) -> object:
    return getattr(getattr(exc, "response", None), "headers", None)



def _transport_errors() -> tuple[type[BaseException], ...]:
    """The HTTP errors the installed ``openai`` client can raise while a stream is read: openai 3 is built on
    ``httpx2``, earlier versions on ``httpx`` (both come with it, so neither is a dependency of ours)."""
    found: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(name).HTTPError)
        except (ImportError, AttributeError):
            continue
    return tuple(found)


TRANSPORT_ERRORS = _transport_errors()

def with_trace_context(client: openai.AsyncOpenAI) -> openai.AsyncOpenAI:
    """``client`` sending the current span's ``traceparent``, so the provider's own traces (a vLLM or a gateway
    with OpenTelemetry) join the caller's trace; ``client`` itself when nothing is traced (no copy is made)."""
    headers = trace_headers()
    return client.with_options(default_headers=headers) if headers else client


class OpenAIConnection:
    def __init__(self, config: LanguageModel | EmbeddingModel, options: OpenAIOptions):
        self.config = config
        self.options = options
        self._api_key: str | None = None
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[openai.AsyncOpenAI, ConcurrencyLimiter]] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def where(self) -> str:
        return self.config.base_url or "the OpenAI API"

    def _client(self) -> tuple[openai.AsyncOpenAI, ConcurrencyLimiter]:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(loop)
        if state is None:
            if self._api_key is None:
                self._api_key = resolve_api_key(self.config)
            client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self.config.base_url or None,
                max_retries=0,
                timeout=self.options.timeout,
            )
            state = (client, ConcurrencyLimiter(self.options.concurrency))
            self._per_loop[loop] = state
        return state

    async def aclose(self) -> None:
        """Close this event loop's HTTP client (others are dropped with their loops)."""
        state = self._per_loop.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state[0].close()

    def forget(self) -> None:
        """Drop every client; a later call creates a new one."""
        self._per_loop.clear()

    @property
    def peak_in_flight(self) -> int:
        """The most calls this connection ever had in flight at once (in any one event loop)."""
        return max((limiter.peak for _, limiter in self._per_loop.values()), default=0)

    async def call(self, what: str, request: Callable[[openai.AsyncOpenAI], Awaitable[T]]) -> T:
        """Run ``request(client)`` with the concurrency bound and retries; raise ModelError when it fails for good."""
        client, limiter = self._client()
        gate = RetryAfterGate(self.options.max_retry_after)

        async def attempt() -> T:
            await gate.wait()
            async with limiter:
                try:
                    return await request(with_trace_context(client))
                except json.JSONDecodeError as exc:  # a 2xx whose JSON body is cut off or broken
                    raise MalformedResponseError(f"invalid JSON ({exc.msg} at character {exc.pos})") from None
                except Exception as exc:
                    gate.note(response_headers(exc))
                    raise

        try:
            return await call_with_retries(
                attempt,
                policy=self.options.retry_policy(),
                is_retryable=is_retryable,
                describe=f"{what} for {self.config.model_name}",
            )
        except (openai.OpenAIError, MalformedResponseError) as exc:
            # ``from None``: the client's exception text is replaced by a redacted one that says what to do.
            raise self._translate(what, exc) from None

    @contextlib.asynccontextmanager
    async def streaming(self, what: str, request: Callable[[openai.AsyncOpenAI], Awaitable[Any]]) -> AsyncIterator[Any]:
        """``request(client)`` opens a stream (``stream=True``); the stream is handed out to be read, then closed.

        The concurrency slot is held until the stream is closed (a stream is a call in flight), and retries
        cover opening it only: once pieces have gone to the caller a failure is final. A failure while
        reading raises ModelError like ``call``; a caller that stops reading (a cancelled task) closes the
        HTTP response, so the server stops generating.
        """
        client, limiter = self._client()
        gate = RetryAfterGate(self.options.max_retry_after)

        async def attempt() -> Any:
            await gate.wait()
            try:
                return await request(with_trace_context(client))
            except Exception as exc:
                gate.note(response_headers(exc))
                raise

        async with limiter:
            try:
                stream = await call_with_retries(
                    attempt, policy=self.options.retry_policy(), is_retryable=is_retryable, describe=f"{what} for {self.config.model_name}",
                )
            except (openai.OpenAIError, MalformedResponseError) as exc:
                raise self._translate(what, exc) from None
            try:
                yield stream
            except openai.OpenAIError as exc:
                raise self._translate(what, exc) from None
            except (*TRANSPORT_ERRORS, json.JSONDecodeError) as exc:  # the connection broke off or a piece was not JSON
                error = ModelError(
                    f"{self.where} broke off {what} for {self.config.model_name} mid-answer ({type(exc).__name__}); "
                    "the pieces before it were kept. Check the server's health and logs."
                )
                raise error from None
            finally:
                with anyio.CancelScope(shield=True):  # even when the reader was cancelled: free the connection now
                    await stream.close()

    def _translate(self, what: str, exc: openai.OpenAIError | MalformedResponseError) -> ModelError:
        attempts = self.options.max_attempts if is_retryable(exc) else 1
        tried = f"after {attempts} attempt(s)"
        name, where = self.config.model_name, self.where
        if isinstance(exc, MalformedResponseError):
            error: ModelError = ModelError(
                f"{where} answered {what} for {name} with {exc} instead of the OpenAI API's JSON, {tried}. "
                "Check that base_url is the API's root (usually ending in /v1) and not a web page or a proxy's "
                "error page, and that the server is healthy."
            )
        elif isinstance(exc, openai.APITimeoutError):
            error = ModelTimeoutError(
                f"{what} for {name} at {where} did not answer within {self.options.timeout:g}s, {tried}. "
                f"Check that the server is up and not overloaded; raise options.timeout or lower options.concurrency."
            )
        elif isinstance(exc, openai.APIConnectionError):
            error = ModelError(
                f"Could not connect to {where} for {what} with {name}, {tried}. "
                f"Check base_url and that the server is running."
            )
        elif isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            error = ModelError(
                f"{where} rejected the API key for {name} ({exc.status_code}). "
                f"Set api_key or api_key_env in the recipe's model table, or OPENAI_API_KEY for OpenAI itself."
            )
        elif isinstance(exc, openai.RateLimitError):
            error = ModelError(
                f"{where} kept refusing {what} for {name} with 429 (rate limit or quota), {tried}. "
                f"Lower options.concurrency, raise options.max_attempts, or check your quota. Server said: {_server_message(exc)}"
            )
        elif isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
            error = ModelError(
                f"{where} failed {what} for {name} with server error {exc.status_code}, {tried}. "
                f"Check the server's logs or try again later. Server said: {_server_message(exc)}"
            )
        elif isinstance(exc, openai.APIStatusError):
            error = ModelError(
                f"{where} rejected {what} for {name} with status {exc.status_code}: {_server_message(exc)}. "
                f"Check the model name and its options (json_mode, max_tokens_param, dimension) for this server."
            )
        else:
            error = ModelError(f"{what} for {name} at {where} failed: {type(exc).__name__}: {exc}")
        error.args = (redact(str(error), self._api_key),)
        return error


def _server_message(exc: openai.APIStatusError) -> str:
    body: Any = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:500]
        if isinstance(inner, str):
            return inner[:500]
    return (str(exc.message) if getattr(exc, "message", None) else type(exc).__name__)[:500]
