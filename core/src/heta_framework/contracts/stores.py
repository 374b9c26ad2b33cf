"""Store types and the small protocols stores satisfy.

A recipe's ``[stores.<slot>]`` names a store type (``type = "faiss"``); the
plugin that registered that type opens it inside the knowledge-base folder.
Embedded defaults need no server: a folder for objects, SQLite for chunks,
FAISS for vectors, Whoosh for full text. Server-backed stores are plugins too.

Optional methods the runner calls when present: ``flush()`` after every step
(persist before the step is marked done) and ``close()`` when the knowledge
base closes.

One contract per slot, each with a conformance suite in
``heta_framework.testing.conformance``: ``ObjectStoreProtocol`` (objects),
``SQLStore`` (sql), ``TextIndexStore`` (text), ``VectorStoreProtocol`` (vector),
``GraphStore`` (graph). Steps and engines call stores only through them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs

# the other slots' contracts live in their own modules; one import path for all of them
from heta_framework.contracts.graph_store import ChunkLink, GraphStore, RemovedFacts, StoredChunk, StoredEntity, StoredRelation
from heta_framework.contracts.sql_store import SQLStore
from heta_framework.contracts.text_index import TextIndexStore


@attrs.frozen
class StoreType:
    """What ``register_stores`` registers.

    ``factory(config, root)`` opens the store; ``config`` is an instance of
    ``config_type`` (an attrs class, built from the recipe's options with
    unknown keys rejected) or ``None``; ``root`` is the knowledge-base folder.
    ``default=True`` makes it the store used when the recipe does not name one
    for ``slot``.
    """

    name: str
    slot: str
    factory: Callable[[Any, Path], Any]
    config_type: type | None = None
    default: bool = False
    description: str = ""


@runtime_checkable
class ObjectStoreProtocol(Protocol):
    """``stores.objects``: keyed blobs (``raw/``, ``parsed/``, ``chunks/``...).

    Keys are relative POSIX paths (``parsed/a1b2.json``); an absolute key or one
    with ``..`` raises ``ValueError``. Each put is atomic: a reader sees the old
    object or the new one, never half of it, and a put followed by a get returns
    what was put. ``flush()`` makes every put since the last flush durable (the
    runner calls it after each step). ``get_*`` of a missing key raises
    ``FileNotFoundError`` (a ``KeyError`` for non-file backends is not allowed:
    callers catch one type); ``delete`` of a missing key is a no-op. ``keys(prefix)``
    yields every key under ``prefix`` (a folder prefix or one exact key), sorted.
    """

    def put_bytes(self, key: str, data: bytes) -> None: ...

    def get_bytes(self, key: str) -> bytes: ...

    def put_json(self, key: str, value: Any) -> None: ...

    def get_json(self, key: str) -> Any: ...

    def exists(self, key: str) -> bool: ...

    def delete(self, key: str) -> None: ...

    def keys(self, prefix: str = "") -> Iterator[str]: ...


@attrs.frozen
class VectorHit:
    id: str
    score: float  # cosine similarity, higher is better
    metadata: dict[str, Any] = attrs.field(factory=dict)


@runtime_checkable
class VectorCollectionProtocol(Protocol):
    """One named set of vectors (``chunks``, ``graph_entities``, ...) with JSON metadata beside them.

    Vectors are float32 ``(n, dimension)`` arrays; similarity is cosine.
    ``filters`` match metadata keys exactly (a list value means any of them); the key ``id``
    matches the record id itself (indexed: no scan of the metadata).
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def __len__(self) -> int: ...

    def upsert(self, ids: Sequence[str], vectors: Any, metadata: Sequence[Mapping[str, Any]]) -> None: ...

    def delete(self, ids: Sequence[str]) -> int: ...

    def delete_where(self, filters: Mapping[str, Any]) -> list[str]: ...

    def contains(self, ids: Sequence[str]) -> list[bool]: ...

    def get_metadata(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]: ...

    def search(self, vectors: Any, top_k: int, filters: Mapping[str, Any] | None = None) -> list[list[VectorHit]]:
        """For each query vector (``(q, dimension)``), the ``top_k`` best hits, best first."""
        ...


@runtime_checkable
class VectorStoreProtocol(Protocol):
    """``stores.vector``: named collections, persisted inside the knowledge-base folder.

    Optional: ``release_collection(name)``, for a store that keeps collections in
    memory. It writes the collection and forgets it, so its memory goes once nobody
    holds it; the next ``collection(name)`` opens it again. A build step calls it
    for a collection it has finished writing (``build_graph`` does for the entity
    vectors before embedding relations: 97 MB at the 10k bench tier). A caller
    still holding the collection keeps a working object. Stores without it (a
    server database) keep nothing worth releasing.
    """

    def collection(self, name: str, dimension: int | None = None) -> VectorCollectionProtocol:
        """Open (or, with ``dimension``, create) a collection."""
        ...

    def has_collection(self, name: str) -> bool: ...

    def drop_collection(self, name: str) -> None: ...

    def relative_paths(self, name: str) -> list[str]:
        """The files/folders of one collection, relative to the knowledge-base folder (for cleanup plans)."""
        ...

    def flush(self) -> None: ...


__all__ = [
    "ChunkLink",
    "GraphStore",
    "ObjectStoreProtocol",
    "RemovedFacts",
    "SQLStore",
    "StoreType",
    "StoredChunk",
    "StoredEntity",
    "StoredRelation",
    "TextIndexStore",
    "VectorCollectionProtocol",
    "VectorHit",
    "VectorStoreProtocol",
]
