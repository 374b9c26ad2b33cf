"""Model configuration (what the recipe names) and client protocols (what providers build).

A recipe names models as ``provider/model``: ``openai/gpt-4o-mini``,
``cohere/rerank-english-v3.0``, ``local/all-MiniLM-L6-v2``. A provider plugin
(``register_model_providers``) turns such a configuration into a client that
satisfies ``EmbeddingClient``, ``LanguageClient`` or ``RerankClient``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

import attrs

from heta_framework.common.secrets import Secret

ModelKind = Literal["embedding", "language", "reranker", "vision"]


def _to_secret(value: Secret | str | None) -> Secret | None:
    if value is None or isinstance(value, Secret):
        return value
    return Secret(value=value)


def _non_negative(instance: Any, attribute: attrs.Attribute, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ValueError(f"prices.{attribute.name} must be a number of at least 0 (per million tokens), got {value!r}")


@attrs.frozen
class ModelPrices:
    """What a model costs per million tokens, as ``prices = {input = 0.15, output = 0.6}`` in its recipe table:
    ``input`` for prompt (and embedded) tokens, ``output`` for completion tokens, in the currency you bill in.
    With it, ``usage`` reports a ``cost`` for the model (docs/observability.md)."""

    input: float = attrs.field(validator=_non_negative)
    output: float = attrs.field(default=0.0, validator=_non_negative)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


def _validate_model_name(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    provider, _, model = value.partition("/")
    if not provider or not model:
        raise ValueError(
            f"model_name must look like 'provider/model' (for example 'openai/gpt-4o-mini'), got {value!r}"
        )


@attrs.frozen
class _ModelConfig:
    model_name: str = attrs.field(validator=_validate_model_name)
    api_key: Secret | None = attrs.field(default=None, converter=_to_secret)
    api_key_env: str | None = None
    base_url: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)
    #: per million tokens; ``usage`` then carries a ``cost`` for this model
    prices: ModelPrices | None = None

    kind: str = attrs.field(init=False, default="model")

    @property
    def provider(self) -> str:
        return self.model_name.partition("/")[0]

    @property
    def model(self) -> str:
        return self.model_name.partition("/")[2]

    def secret(self) -> Secret | None:
        """The key to use: the recipe's value, else the named environment variable."""
        if self.api_key is not None:
            return self.api_key
        if self.api_key_env:
            return Secret(env=self.api_key_env)
        return None


@attrs.frozen
class EmbeddingModel(_ModelConfig):
    """An embedding model, e.g. ``EmbeddingModel(model_name="local/all-MiniLM-L6-v2")``."""

    kind: str = attrs.field(init=False, default="embedding")


@attrs.frozen
class LanguageModel(_ModelConfig):
    """A chat/completion model, e.g. ``LanguageModel(model_name="openai/gpt-4o-mini")``."""

    kind: str = attrs.field(init=False, default="language")


@attrs.frozen
class RerankModel(_ModelConfig):
    """A reranker, e.g. ``RerankModel(model_name="cohere/rerank-english-v3.0")``."""

    kind: str = attrs.field(init=False, default="reranker")


@attrs.frozen
class VisionModel(_ModelConfig):
    """A model that reads images (``VisionClient``), e.g. ``VisionModel(model_name="openai/gpt-4o-mini")``:
    ParseDocuments has it describe or transcribe image files and PDF pages without a text layer."""

    kind: str = attrs.field(init=False, default="vision")


AnyModel = EmbeddingModel | LanguageModel | RerankModel | VisionModel


# --- what providers build ---------------------------------------------------------


@runtime_checkable
class EmbeddingClient(Protocol):
    """Turns texts into L2-normalisable float vectors."""

    model_name: str

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> Any:
        """Return a float32 array of shape ``(len(texts), dimension)``: the vectors of documents (passages)."""
        ...

    # Optional: ``async def embed_queries(self, texts) -> array`` for a model that embeds a search query
    # unlike a passage (E5's ``query: `` / ``passage: `` prefixes, instruction-tuned models). It is not part
    # of the protocol, so every existing client still satisfies it; callers go through ``embed_queries()``.


async def embed_queries(client: EmbeddingClient, texts: Sequence[str]) -> Any:
    """The vectors of search queries: ``client.embed_queries`` when the model embeds queries its own way,
    else ``client.embed``. Every query-time embedding in Heta goes through here."""
    own = getattr(client, "embed_queries", None)
    return await (own(texts) if own is not None else client.embed(texts))


def _tool_calls(items: Iterable[ToolCall]) -> tuple[ToolCall, ...]:
    return tuple(items)


@attrs.frozen
class ToolCall:
    """One call a model asked for: ``arguments`` is the JSON text exactly as the model wrote it (it may be malformed:
    the caller parses and judges it, so a bad call becomes a reported problem, not a crash in the client)."""

    id: str
    name: str
    arguments: str = "{}"


@attrs.frozen
class Message:
    """One turn. ``tool_calls`` on an assistant turn (what the model asked for), ``tool_call_id`` on a ``tool``
    turn (the result of that call); both default to nothing, so plain conversations are written as before."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=_tool_calls)
    tool_call_id: str | None = None


@attrs.frozen
class Completion:
    """What a language model answered, with token usage when the server reports it."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


@runtime_checkable
class LanguageClient(Protocol):
    model_name: str

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        json_schema: Mapping[str, Any] | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> Completion:
        """Answer the conversation; with ``json_schema`` the server is asked for JSON of that shape."""
        ...


@attrs.frozen
class ToolSpec:
    """A function the model may call: ``parameters`` is its JSON schema (an object)."""

    name: str
    description: str
    parameters: Mapping[str, Any] = attrs.field(factory=lambda: {"type": "object", "properties": {}})

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}}


@attrs.frozen
class ToolCompletion:
    """A reply that may call tools: the text (often empty when it calls), the calls asked for, token usage."""

    text: str
    tool_calls: tuple[ToolCall, ...] = attrs.field(default=(), converter=_tool_calls)
    prompt_tokens: int = 0
    completion_tokens: int = 0


class ToolCallingUnsupported(Exception):
    """The language client has no ``complete_with_tools``: it cannot let a model call tools."""


def supports_tools(client: Any) -> bool:
    return callable(getattr(client, "complete_with_tools", None))


async def complete_with_tools(
    client: LanguageClient,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    *,
    tool_choice: str = "auto",
    temperature: float = 0.0,
    max_tokens: int | None = None,
    stream: bool = False,
) -> ToolCompletion:
    """One turn of a tool loop: ``client.complete_with_tools`` when the client offers it (optional, like
    ``embed_queries``, so every existing client still satisfies ``LanguageClient``); otherwise
    ``ToolCallingUnsupported``. ``tool_choice`` is ``"auto"``, ``"none"`` or ``"required"``. ``stream=True``
    asks the client to read the turn as a stream (passed only when asked, so a client without it still works)."""
    own = getattr(client, "complete_with_tools", None)
    if own is None:
        raise ToolCallingUnsupported(f"the language client for {client.model_name!r} cannot call tools")
    extra = {"stream": True} if stream else {}
    result: ToolCompletion = await own(messages, tools, tool_choice=tool_choice, temperature=temperature, max_tokens=max_tokens, **extra)
    return result


@runtime_checkable
class VisionClient(Protocol):
    """Reads one image: its text transcribed, or what it shows described (``models.vision``).

    A language client whose model also accepts images may offer ``read_image`` too, with
    ``accepts_images`` true; ParseDocuments then uses it when the recipe has no vision model.
    """

    model_name: str

    async def read_image(self, image: bytes, media_type: str, instruction: str) -> Completion:
        """``image`` is the file's bytes (``media_type`` such as ``image/png``); answer as plain text."""
        ...


@attrs.frozen
class RerankHit:
    index: int
    score: float


@runtime_checkable
class RerankClient(Protocol):
    model_name: str

    async def rerank(self, query: str, documents: Sequence[str], top_n: int) -> list[RerankHit]:
        """Return the ``top_n`` most relevant documents, best first, by their index in ``documents``."""
        ...


@attrs.frozen
class ModelProvider:
    """What ``register_model_providers`` registers: a factory for one provider prefix.

    ``create(config)`` gets the recipe's model configuration and returns a client.
    It must not touch the network: connect lazily on the first call.
    """

    name: str
    kinds: frozenset[str]
    create: Any  # Callable[[AnyModel], EmbeddingClient | LanguageClient | RerankClient]
    description: str = ""
