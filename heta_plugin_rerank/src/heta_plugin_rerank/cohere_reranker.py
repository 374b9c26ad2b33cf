"""``cohere/<model>`` rerankers: the Cohere v2 rerank API, or any server that speaks it.

Set ``base_url`` (without ``/v2``) to use a self-hosted server with a Cohere-compatible
``/v2/rerank`` endpoint. The key is the recipe's ``api_key``/``api_key_env``; for
Cohere itself also ``CO_API_KEY``, which is never sent to other servers.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import attrs
import cohere
import httpx
from cohere.core.api_error import ApiError
from heta_framework.common.models import RerankHit, RerankModel
from heta_framework.common.remote import MalformedResponseError, RetryAfterGate
from heta_framework.common.retry import ConcurrencyLimiter, call_with_retries
from heta_framework.common.secrets import redact
from heta_framework.errors import ModelError, ModelTimeoutError
from heta_framework.kb.tracing import trace_headers

from heta_plugin_rerank.hits import best_first
from heta_plugin_rerank.options import CohereOptions, parse_options
from heta_plugin_rerank.retrying import as_malformed, checked_results, is_retryable, response_headers

COHERE_HOSTS = frozenset({"api.cohere.com", "api.cohere.ai"})
PLACEHOLDER_KEY = "heta-no-key"


def talks_to_cohere(base_url: str | None) -> bool:
    return not base_url or (urlsplit(base_url).hostname or "").lower() in COHERE_HOSTS


def resolve_api_key(config: RerankModel) -> str:
    secret = config.secret()
    value = secret.reveal() if secret is not None else None
    if value:
        return value
    if not talks_to_cohere(config.base_url):
        return PLACEHOLDER_KEY  # self-hosted servers usually need none; the client insists on one
    if config.api_key_env:
        raise ModelError(
            f"{config.model_name}: the environment variable {config.api_key_env} named by api_key_env is not set. "
            f"Export it, or put api_key in the recipe."
        )
    value = os.environ.get("CO_API_KEY")
    if value:
        return value
    raise ModelError(
        f"No API key for {config.model_name}: set api_key or api_key_env in the recipe's [models.reranker] table, "
        f"or export CO_API_KEY."
    )


@attrs.frozen
class _LoopState:
    client: cohere.AsyncClientV2
    http: httpx.AsyncClient
    limiter: ConcurrencyLimiter


class CohereRerankClient:
    """Satisfies ``RerankClient``. Created without touching the network."""

    def __init__(self, config: RerankModel):
        self.config = config
        self.model_name = config.model_name
        self.options = parse_options(CohereOptions, config.model_name, config.options)
        self._api_key: str | None = None
        # per event loop: the sync facade runs each call in a fresh asyncio.run loop
        self._per_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"CohereRerankClient({self.model_name!r}, base_url={self.config.base_url!r})"

    @property
    def where(self) -> str:
        return self.config.base_url or "the Cohere API"

    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        state = self._per_loop.get(loop)
        if state is None:
            if self._api_key is None:
                self._api_key = resolve_api_key(self.config)
            extra: dict[str, Any] = {"base_url": self.config.base_url.rstrip("/")} if self.config.base_url else {}
            # our own httpx client, so that aclose() can close it
            http = httpx.AsyncClient(timeout=self.options.timeout, follow_redirects=True)
            client = cohere.AsyncClientV2(
                api_key=self._api_key, timeout=self.options.timeout, max_retries=0, httpx_client=http, **extra
            )
            state = _LoopState(client, http, ConcurrencyLimiter(self.options.concurrency))
            self._per_loop[loop] = state
        return state

    @property
    def peak_in_flight(self) -> int:
        """The most rerank calls this client ever had in flight at once (in any one event loop)."""
        return max((state.limiter.peak for state in self._per_loop.values()), default=0)

    async def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[RerankHit]:
        documents = list(documents)
        top_n = min(top_n, len(documents))
        if top_n <= 0:
            return []
        state = self._state()
        client, limiter = state.client, state.limiter
        gate = RetryAfterGate(self.options.max_retry_after)
        request: dict[str, Any] = {"model": self.config.model, "query": query, "documents": documents, "top_n": top_n}
        if self.options.max_tokens_per_doc is not None:
            request["max_tokens_per_doc"] = self.options.max_tokens_per_doc

        async def attempt() -> list[tuple[int, float]]:
            await gate.wait()
            async with limiter:
                try:
                    options: dict[str, Any] = {"max_retries": 0, "timeout": self.options.timeout}
                    if headers := trace_headers():  # the rerank call's span, so a traced gateway joins the trace
                        options["additional_headers"] = headers
                    response = await client.rerank(**request, request_options=options)
                except Exception as exc:
                    malformed = as_malformed(exc)
                    if malformed is not None:
                        raise malformed from None
                    gate.note(response_headers(exc))
                    raise
                return checked_results(response)

        try:
            scored = await call_with_retries(
                attempt, policy=self.options.retry_policy(), is_retryable=is_retryable, describe=f"rerank for {self.model_name}"
            )
        except (ApiError, httpx.HTTPError, MalformedResponseError) as exc:
            # ``from None``: the client's text (headers, bodies) is replaced by a redacted one that says what to do
            raise self._translate(exc) from None
        if any(not 0 <= index < len(documents) for index, _ in scored):
            raise ModelError(f"{self.where} returned document indexes outside 0..{len(documents) - 1} for {self.model_name}.")
        return best_first(scored, top_n)

    def _translate(self, exc: BaseException) -> ModelError:
        attempts = self.options.max_attempts if is_retryable(exc) else 1
        tried = f"after {attempts} attempt(s)"
        name, where = self.model_name, self.where
        status = getattr(exc, "status_code", None)
        if isinstance(exc, MalformedResponseError):
            error: ModelError = ModelError(
                f"{where} answered rerank for {name} with {exc} instead of the rerank API's JSON, {tried}. "
                "Check that base_url is the server's root (without /v2) and not a web page or a proxy's error page, "
                "and that the server is healthy."
            )
        elif isinstance(exc, httpx.TimeoutException):
            error = ModelTimeoutError(
                f"rerank for {name} at {where} did not answer within {self.options.timeout:g}s, {tried}. "
                f"Check that the server is up; raise options.timeout, lower options.concurrency, or rerank fewer candidates."
            )
        elif isinstance(exc, httpx.HTTPError):
            error = ModelError(f"Could not connect to {where} for rerank with {name}, {tried}. Check base_url and that the server is running.")
        elif status in (401, 403):
            error = ModelError(
                f"{where} rejected the API key for {name} ({status}). "
                f"Set api_key or api_key_env in the recipe's [models.reranker] table, or CO_API_KEY for Cohere itself."
            )
        elif status == 429:
            error = ModelError(
                f"{where} kept refusing rerank for {name} with 429 (rate limit), {tried}. "
                f"Lower options.concurrency, raise options.max_attempts, or check your plan. Server said: {_server_message(exc)}"
            )
        elif status is not None and status >= 500:
            error = ModelError(
                f"{where} failed rerank for {name} with server error {status}, {tried}. "
                f"Try again later or check the server. Server said: {_server_message(exc)}"
            )
        else:
            error = ModelError(
                f"{where} rejected rerank for {name} with status {status}: {_server_message(exc)}. Check the model name and options."
            )
        error.args = (redact(str(error), self._api_key),)
        return error

    async def aclose(self) -> None:
        """Close this event loop's HTTP client (others are dropped with their loops)."""
        state = self._per_loop.pop(asyncio.get_running_loop(), None)
        if state is not None:
            await state.http.aclose()

    def close(self) -> None:
        self._per_loop.clear()


def _server_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        for key in ("message", "error", "detail"):
            value = body.get(key)
            if isinstance(value, dict):
                value = value.get("message")
            if value:
                return str(value)[:500]
    if isinstance(body, str) and body:
        return body[:500]
    return type(exc).__name__
