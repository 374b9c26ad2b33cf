"""heta-plugin-leanrag: LeanRAG's semantic aggregation and bottom-up retrieval over the graph plugin's graph.

Step (recipe name) ``leanrag_aggregate``: clusters of entities by their vectors, an aggregate entity per
cluster (by the language model or extractive) and relations between aggregates, layer by layer,
incremental; stored in the object store and the vector store, never in the graph's tables. Mode
``lean_rag_query`` (``engine.py``), available once the hierarchy is built. The package itself is the
plugin module the ``heta`` entry point names.
"""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_leanrag.engine import LeanRagQueryEngine
from heta_plugin_leanrag.options import LeanRagOptions
from heta_plugin_leanrag.steps import SemanticAggregation

__all__ = ["LeanRagOptions", "LeanRagQueryEngine", "SemanticAggregation", "register_query_engines", "register_steps"]


@hookimpl
def register_steps(register):
    register(SemanticAggregation)


@hookimpl
def register_query_engines(register):
    register(LeanRagQueryEngine())
