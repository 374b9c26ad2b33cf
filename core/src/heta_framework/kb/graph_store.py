"""The public import path of ``heta_framework.contracts.graph_store`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.graph_store import (
    ChunkLink,
    EntityFact,
    FactEvidence,
    FactKind,
    GraphFacts,
    GraphStore,
    OrphanHandler,
    RelationFact,
    RemovedFacts,
    StoredChunk,
    StoredEntity,
    StoredRelation,
)

__all__ = [
    "ChunkLink",
    "EntityFact",
    "FactEvidence",
    "FactKind",
    "GraphFacts",
    "GraphStore",
    "OrphanHandler",
    "RelationFact",
    "RemovedFacts",
    "StoredChunk",
    "StoredEntity",
    "StoredRelation",
]
