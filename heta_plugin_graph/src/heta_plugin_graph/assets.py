"""The search assets the graph publishes, and the query mode they unlock."""

from __future__ import annotations

from heta_framework.kb.search import SearchAsset

from heta_plugin_graph.vectors import ENTITY_COLLECTION, RELATION_COLLECTION

GRAPH_SEARCH_MODE = "heta_graph_search"

GRAPH_TABLES = SearchAsset(
    kind="graph_tables",
    name="default",
    store="stores.graph",
    metadata={"tables": ["entities", "relations", "evidence", "chunks"]},
)
GRAPH_VECTOR_INDEX = SearchAsset(
    kind="graph_vector_index",
    name="default",
    store="stores.vector",
    metadata={"collections": {"entities": ENTITY_COLLECTION, "relations": RELATION_COLLECTION}},
)
GRAPH_ASSETS = (GRAPH_TABLES, GRAPH_VECTOR_INDEX)
