"""heta-plugin-graph: Heta-style knowledge graphs for Heta knowledge bases.

Steps (recipe names): ``merge_chunks``, ``rechunk_documents``, ``extract_entities``,
``extract_relations``, ``deduplicate_entities``, ``deduplicate_relations``,
``build_graph``, ``merge_graph_into_store``; the procedure ``heta_graph``
(``HetaGraphProcedure``); the store type ``sqlite_graph`` (slot ``graph``); the
query mode ``heta_graph_search``. The package itself is the plugin module the
``heta`` entry point names.
"""

from heta_plugin_graph.engine import GraphSearchOptions, HetaGraphSearchEngine
from heta_plugin_graph.normalize import normalize_name
from heta_plugin_graph.plugin import (
    GRAPH_STORE_TYPE,
    register_procedures,
    register_query_engines,
    register_steps,
    register_stores,
)
from heta_plugin_graph.procedure import HetaGraphProcedure
from heta_plugin_graph.steps import (
    BuildGraph,
    DeduplicateEntities,
    DeduplicateRelations,
    ExtractEntities,
    ExtractRelations,
    MergeChunks,
    MergeGraphIntoStore,
    RechunkDocuments,
)
from heta_plugin_graph.store import SQLiteGraphStore, SQLiteGraphStoreConfig

__all__ = [
    "BuildGraph",
    "DeduplicateEntities",
    "DeduplicateRelations",
    "ExtractEntities",
    "ExtractRelations",
    "GRAPH_STORE_TYPE",
    "GraphSearchOptions",
    "HetaGraphProcedure",
    "HetaGraphSearchEngine",
    "MergeChunks",
    "MergeGraphIntoStore",
    "RechunkDocuments",
    "SQLiteGraphStore",
    "SQLiteGraphStoreConfig",
    "normalize_name",
    "register_procedures",
    "register_query_engines",
    "register_steps",
    "register_stores",
]
