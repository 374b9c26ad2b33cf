"""Model clients as the knowledge base hands them out: every call in a span and counted in ``usage``.

``ComponentSet`` wraps each client a provider makes in a ``MeteredModel``, so model calls are traced and
counted at this one place, whichever step, engine or executor makes them. The wrapper passes every other
attribute through, and offers an optional method (``embed_queries``, ``stream``, ``complete_with_tools``)
only when the client has it, so ``getattr(client, "stream", None)`` still tells what the client can do.

Span attributes follow OpenTelemetry's GenAI conventions (``gen_ai.request.model``, ``gen_ai.usage.*``),
which Langfuse and other LLM tools read; never a prompt, a text or a key.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from opentelemetry import trace

from heta_framework.common import tracing
from heta_framework.common.usage import UsageMeter, model_call, record_call

#: method -> (GenAI operation name, what its first list argument counts: "texts", "documents" or "")
_METERED = {
    "embed": ("embeddings", "texts"),
    "embed_queries": ("embeddings", "texts"),
    "complete": ("chat", ""),
    "complete_with_tools": ("chat", ""),
    "read_image": ("chat", ""),
    "rerank": ("rerank", "documents"),
}


class MeteredModel:
    """A model client whose calls are traced and counted; everything else is the client's own."""

    def __init__(self, client: Any, config: Any, lifetime: UsageMeter | None = None):
        self.__dict__.update(_client=client, _config=config, _lifetime=lifetime)

    # ``isinstance(client, OpenAILanguageClient)`` keeps working: isinstance falls back to ``__class__``
    # (as wrapt's and unittest.mock's proxies do), while ``type(client)`` still says it is metered
    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: D105
        return type(self.__dict__["_client"])

    @property
    def wrapped(self) -> Any:
        """The provider's own client."""
        return self.__dict__["_client"]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy and pickle probe dunders before __init__ ran
            raise AttributeError(name)
        value = getattr(self.__dict__["_client"], name)
        if name == "stream" and callable(value):
            return self._metered_stream(value)
        if name in _METERED and callable(value):
            wrapped = self._metered(name, value)
            self.__dict__[name] = wrapped  # made once per method
            return wrapped
        return value

    def __repr__(self) -> str:
        return repr(self.__dict__["_client"])

    # --- the wrappers ------------------------------------------------------------------

    def _attributes(self, operation: str) -> dict[str, Any]:
        config = self.__dict__["_config"]
        return {
            "gen_ai.operation.name": operation,
            "gen_ai.provider.name": config.provider,
            "gen_ai.request.model": config.model,
            "heta.model": config.model_name,
            "heta.model.kind": config.kind,
        }

    def _record(self, *, items: int, input_tokens: int, output_tokens: int, tokens_known: bool) -> None:
        config = self.__dict__["_config"]
        record_call(
            config.model_name, config.kind, items=items, input_tokens=input_tokens, output_tokens=output_tokens, tokens_known=tokens_known,
            prices=config.prices, lifetime=self.__dict__["_lifetime"],
        )

    def _metered(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        operation, counted = _METERED[name]
        config = self.__dict__["_config"]

        async def call(*args: Any, **kwargs: Any) -> Any:
            items = _count(name, args, kwargs)
            attributes = self._attributes(operation)
            if counted:
                attributes[f"heta.model.{counted}"] = items
            with tracing.span(f"{operation} {config.model_name}", attributes) as current, model_call() as reported:
                result = await method(*args, **kwargs)
                input_tokens, output_tokens = _tokens(result, reported)
                tokens_known = reported.reported or not counted  # a completion says its tokens; an embedding call may not
                self._record(items=items, input_tokens=input_tokens, output_tokens=output_tokens, tokens_known=tokens_known)
                if tokens_known and name != "rerank":
                    tracing.set_attributes(current, {"gen_ai.usage.input_tokens": input_tokens, "gen_ai.usage.output_tokens": output_tokens})
                return result

        return call

    def _metered_stream(self, method: Callable[..., Any]) -> Callable[..., Any]:
        config = self.__dict__["_config"]

        async def stream(*args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            # started, not made current: a generator may be closed in another task, where a context made
            # current here could not be detached; the HTTP request still carries the caller's trace
            current = trace.get_tracer(tracing.TRACER_NAME).start_span(f"chat {config.model_name}", attributes=self._attributes("chat"))
            input_tokens = output_tokens = 0
            started = time.perf_counter()
            try:
                async for delta in method(*args, **kwargs):
                    input_tokens += getattr(delta, "prompt_tokens", 0) or 0
                    output_tokens += getattr(delta, "completion_tokens", 0) or 0
                    yield delta
            except BaseException as exc:
                current.set_attribute("error.type", type(exc).__name__)
                current.set_status(trace.Status(trace.StatusCode.ERROR, type(exc).__name__))
                raise
            finally:
                self._record(items=0, input_tokens=input_tokens, output_tokens=output_tokens, tokens_known=True)
                tracing.set_attributes(current, {
                    "gen_ai.usage.input_tokens": input_tokens, "gen_ai.usage.output_tokens": output_tokens,
                    "heta.stream.seconds": round(time.perf_counter() - started, 3),
                })
                current.end()

        return stream


def _count(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """Texts embedded, documents reranked, images read: what a call's size is measured in."""
    if name in ("embed", "embed_queries"):
        texts = args[0] if args else kwargs.get("texts", ())
        return len(texts)
    if name == "rerank":
        documents = args[1] if len(args) > 1 else kwargs.get("documents", ())
        return len(documents)
    return 1 if name == "read_image" else 0


def _tokens(result: Any, reported: Any) -> tuple[int, int]:
    """Tokens from the answer (a ``Completion`` says them), else what the client reported during the call."""
    prompt = getattr(result, "prompt_tokens", None)
    if isinstance(prompt, int):
        return prompt, int(getattr(result, "completion_tokens", 0) or 0)
    return reported.input, reported.output


def metered(client: Any, config: Any, lifetime: UsageMeter | None = None) -> Any:
    """``client`` wrapped once (a client already metered is returned as it is)."""
    return client if isinstance(client, MeteredModel) else MeteredModel(client, config, lifetime)
