"""The public import path of every store slot's contract: ``heta_framework.contracts.stores`` (objects,
vectors, ``StoreType``) and the SQL, text-index and graph contracts beside it (docs/architecture.md)."""

from heta_framework.contracts.graph_store import ChunkLink, GraphStore, RemovedFacts, StoredChunk, StoredEntity, StoredRelation
from heta_framework.contracts.sql_store import SQLStore
from heta_framework.contracts.stores import (
    ObjectStoreProtocol,
    StoreType,
    VectorCollectionProtocol,
    VectorHit,
    VectorStoreProtocol,
)
from heta_framework.contracts.text_index import TextIndexStore

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
