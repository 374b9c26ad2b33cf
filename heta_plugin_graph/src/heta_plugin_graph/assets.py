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
    # "one_per_text": relations that embed the same text share one vector (writer.text_carriers); an index
    # built before this has no such key and a vector per relation, so a search fetches more to collapse them
    metadata={"collections": {"entities": ENTITY_COLLECTION, "relations": RELATION_COLLECTION}, "relation_vectors": "one_per_text"},
)
GRAPH_ASSETS = (GRAPH_TABLES, GRAPH_VECTOR_INDEX)
