"""heta-plugin-graphrag: Microsoft GraphRAG's method over the graph plugin's entities, relations and evidence.

Steps (recipe names): ``detect_communities`` (hierarchical Leiden, incremental)
and ``community_reports`` (GraphRAG's reports, by the language model or
extractive); modes ``graphrag_global_search`` and ``graphrag_local_search``
(``engines.py``), available once the reports are built. The package itself is
the plugin module the ``heta`` entry point names.
"""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_graphrag.engines import ENGINES, GraphRagGlobalSearchEngine, GraphRagLocalSearchEngine
from heta_plugin_graphrag.options import GlobalSearchOptions, LocalSearchOptions
from heta_plugin_graphrag.steps import CommunityReports, DetectCommunities

__all__ = [
    "CommunityReports",
    "DetectCommunities",
    "GlobalSearchOptions",
    "GraphRagGlobalSearchEngine",
    "GraphRagLocalSearchEngine",
    "LocalSearchOptions",
    "register_query_engines",
    "register_steps",
]


@hookimpl
def register_steps(register):
    register(DetectCommunities)
    register(CommunityReports)


@hookimpl
def register_query_engines(register):
    for engine in ENGINES:
        register(engine())
