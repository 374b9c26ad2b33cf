"""Where the hierarchy lives: one JSON object in the knowledge base's object store, and the aggregates' vectors.

The base graph's tables are never written: aggregates and their relations are this plugin's own, in
``objects/leanrag/hierarchy.json`` (the folder store, or a row of the PostgreSQL object store), and
their vectors in the vector store's ``leanrag_aggregates`` collection. ``heta_graph_search``,
GraphRAG and LightRAG never see them. JSON, never pickles.

The JSON (``format`` 1)::

    settings    the clustering settings it was built with (other settings cluster afresh)
    layers      per layer L, its clusters: {"aggregate": id at level L+1, "members": ids at level L}
    aggregates  id -> {level, name, description, findings, members (most central first), parent,
                       documents, chunk_ids [[chunk id, leaves it supports]], leaf_count,
                       content_hash, text_hash, origin}
    relations   id -> {level, source, target, description, documents, base_relation_ids,
                       chunk_ids, edge_count, content_hash, origin}
    parents     base entity id -> its aggregate at level 1
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heta_framework.kb.search import SearchAsset

PREFIX = "leanrag/"
HIERARCHY_KEY = f"{PREFIX}hierarchy.json"
AGGREGATE_COLLECTION = "leanrag_aggregates"
HIERARCHY_ARTIFACT = "leanrag_hierarchy"
MODE = "lean_rag_query"
ASSET_KIND = "leanrag_hierarchy"
FORMAT = 1

#: published by ``leanrag_aggregate``; ``lean_rag_query`` requires it (and the graph's tables and vectors)
HIERARCHY_ASSET = SearchAsset(
    kind=ASSET_KIND,
    name="default",
    store="stores.objects",
    metadata={"hierarchy": HIERARCHY_KEY, "vectors": {"store": "stores.vector", "collection": AGGREGATE_COLLECTION}},
)


class Hierarchy:
    """A stored hierarchy, read only: parents, chains, the relation between two aggregates."""

    def __init__(self, data: Mapping[str, Any] | None = None):
        data = dict(data or {})
        self.settings: str = data.get("settings", "")
        self.layers: list[list[dict[str, Any]]] = list(data.get("layers", []))
        self.aggregates: dict[str, dict[str, Any]] = dict(data.get("aggregates", {}))
        self.relations: dict[str, dict[str, Any]] = dict(data.get("relations", {}))
        self.parents: dict[str, str] = dict(data.get("parents", {}))
        self._pairs: dict[tuple[str, str], str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "settings": self.settings, "layers": self.layers, "aggregates": self.aggregates,
                "relations": self.relations, "parents": self.parents}

    @property
    def levels(self) -> int:
        return len(self.layers)

    def parent(self, node_id: str) -> str | None:
        if node_id in self.aggregates:
            return self.aggregates[node_id].get("parent")
        return self.parents.get(node_id)

    def chain(self, node_id: str) -> list[str]:
        """``node_id`` and its ancestors, lowest first."""
        chain = [node_id]
        while (parent := self.parent(chain[-1])) is not None and parent not in chain:
            chain.append(parent)
        return chain

    def relation_between(self, a: str, b: str) -> str | None:
        if self._pairs is None:
            self._pairs = {tuple(sorted((r["source"], r["target"]))): rid for rid, r in self.relations.items()}  # type: ignore[misc]
        return self._pairs.get((a, b) if a < b else (b, a))


def load_hierarchy(objects: Any) -> Hierarchy:
    return Hierarchy(objects.get_json(HIERARCHY_KEY) if objects.exists(HIERARCHY_KEY) else None)


def save_hierarchy(objects: Any, hierarchy: Hierarchy) -> None:
    objects.put_json(HIERARCHY_KEY, hierarchy.to_json())
