"""Typed access to a knowledge base's components: the model clients and stores behind the spec's keys.

The spec's keys stay the way to name a component (``model_ref("language", "strong")``,
``store_ref("vector")``, ``"stores.objects"``), and ``get_component(key)`` still
answers ``Any``. These accessors name the same components and return the contract
each one satisfies (``heta_framework.common.models``, ``heta_framework.contracts.stores`` and
friends), so a plugin's step or engine is type-checked against core alone, never
against another plugin's classes::

    objects = context.store("objects")             # ObjectStoreProtocol
    vectors = context.store("vector")              # VectorStoreProtocol
    embedder = context.embedding_model()           # EmbeddingClient ("models.embedding")
    strong = context.language_model("strong")      # LanguageClient ("models.language.strong")

They check nothing at run time (a protocol check may read a property such as an
API model's ``dimension``, which can ask the server): a store plugin's own tests run
its conformance suite, which asserts the protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, cast, overload

import attrs

# Nothing from heta_framework at run time: contracts.steps and contracts.search (QueryContext) build on this module.
if TYPE_CHECKING:
    from heta_framework.common.models import EmbeddingClient, LanguageClient, RerankClient, VisionClient
    from heta_framework.contracts.documents import ParserSet
    from heta_framework.contracts.graph_store import GraphStore
    from heta_framework.contracts.sql_store import SQLStore
    from heta_framework.contracts.stores import ObjectStoreProtocol, VectorStoreProtocol
    from heta_framework.contracts.text_index import TextIndexStore

ComponentKind = Literal["models", "stores", "parsers"]


@attrs.frozen(order=True)
class ComponentRef:
    """A reference to a recipe component; ``key`` is ``kind.type`` or ``kind.type.name``."""

    kind: str
    type: str
    name: str | None = None

    @property
    def key(self) -> str:
        base = f"{self.kind}.{self.type}"
        return base if self.name is None else f"{base}.{self.name}"

    @classmethod
    def parse(cls, key: str) -> ComponentRef:
        parts = key.split(".")
        if len(parts) not in (2, 3):
            raise ValueError(f"component key must look like 'models.language' or 'models.language.strong', got {key!r}")
        return cls(*parts)

    def __str__(self) -> str:
        return self.key


def model_ref(type: str, name: str | None = None) -> ComponentRef:
    """``model_ref("language", "strong").key == "models.language.strong"``."""
    return ComponentRef("models", type, name)


def store_ref(type: str, name: str | None = None) -> ComponentRef:
    """``store_ref("vector").key == "stores.vector"``."""
    return ComponentRef("stores", type, name)


def parser_ref(type: str = "documents", name: str | None = None) -> ComponentRef:
    """``parser_ref().key == "parsers.documents"``."""
    return ComponentRef("parsers", type, name)


#: the store slots with a contract in core, as ``[stores.<slot>]`` names them
StoreSlot = Literal["objects", "sql", "text", "vector", "graph"]


def _key(kind: str, type: str, name: str | None) -> str:
    # the key ``model_ref(type, name).key`` / ``store_ref(type, name).key`` spells
    return f"{kind}.{type}" if name is None else f"{kind}.{type}.{name}"


class ComponentAccessProtocol(Protocol):
    """What a step or engine context offers to reach components (``StepContextProtocol`` includes it)."""

    def get_component(self, key: str) -> Any: ...

    def has_component(self, key: str) -> bool: ...

    def component(self, ref: ComponentRef | str) -> Any: ...

    def embedding_model(self, name: str | None = None) -> EmbeddingClient: ...

    def language_model(self, name: str | None = None) -> LanguageClient: ...

    def vision_model(self, name: str | None = None) -> VisionClient: ...

    def reranker(self, name: str | None = None) -> RerankClient: ...

    def parsers(self, name: str | None = None) -> ParserSet: ...

    @overload
    def store(self, slot: Literal["objects"], name: str | None = None) -> ObjectStoreProtocol: ...
    @overload
    def store(self, slot: Literal["sql"], name: str | None = None) -> SQLStore: ...
    @overload
    def store(self, slot: Literal["text"], name: str | None = None) -> TextIndexStore: ...
    @overload
    def store(self, slot: Literal["vector"], name: str | None = None) -> VectorStoreProtocol: ...
    @overload
    def store(self, slot: Literal["graph"], name: str | None = None) -> GraphStore: ...
    @overload
    def store(self, slot: str, name: str | None = None) -> Any: ...


class ComponentAccessors:
    """The typed accessors; a class that has ``get_component(key)`` inherits them (``StepContext``,
    ``QueryContext``). ``name`` picks a named component (``[models.language.strong]``,
    ``[stores.vector.images]``); ``None`` is the default one."""

    def get_component(self, key: str) -> Any:
        raise NotImplementedError

    def has_component(self, key: str) -> bool:
        raise NotImplementedError

    def component(self, ref: ComponentRef | str) -> Any:
        """The component a ``ComponentRef`` (or its key) names, untyped: for a kind with no contract in core."""
        return self.get_component(ref if isinstance(ref, str) else ref.key)

    def embedding_model(self, name: str | None = None) -> EmbeddingClient:
        return cast("EmbeddingClient", self.get_component(_key("models", "embedding", name)))

    def language_model(self, name: str | None = None) -> LanguageClient:
        return cast("LanguageClient", self.get_component(_key("models", "language", name)))

    def vision_model(self, name: str | None = None) -> VisionClient:
        return cast("VisionClient", self.get_component(_key("models", "vision", name)))

    def reranker(self, name: str | None = None) -> RerankClient:
        return cast("RerankClient", self.get_component(_key("models", "reranker", name)))

    def parsers(self, name: str | None = None) -> ParserSet:
        return cast("ParserSet", self.get_component("parsers.documents" if name is None else f"parsers.{name}"))

    @overload
    def store(self, slot: Literal["objects"], name: str | None = None) -> ObjectStoreProtocol: ...

    @overload
    def store(self, slot: Literal["sql"], name: str | None = None) -> SQLStore: ...

    @overload
    def store(self, slot: Literal["text"], name: str | None = None) -> TextIndexStore: ...

    @overload
    def store(self, slot: Literal["vector"], name: str | None = None) -> VectorStoreProtocol: ...

    @overload
    def store(self, slot: Literal["graph"], name: str | None = None) -> GraphStore: ...

    @overload
    def store(self, slot: str, name: str | None = None) -> Any: ...

    def store(self, slot: str, name: str | None = None) -> Any:
        """The store in ``[stores.<slot>]`` (or ``[stores.<slot>.<name>]``), or the slot's default store."""
        return self.get_component(_key("stores", slot, name))
