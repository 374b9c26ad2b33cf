"""heta-plugin-hirag: HiRAG's hierarchical knowledge over the graph plugin's entities, relations and evidence.

Steps (recipe names): ``hirag_hierarchical_aggregation`` (layers of summary entities),
``hirag_community`` (Leiden communities of the layered graph and their reports) and
``hirag_bridges`` (paths between key entities of different communities); modes
``hi_rag_query``, ``hi_rag_nobridge_query``, ``hi_rag_local_query``, ``hi_rag_global_query``
and ``hi_rag_bridge_query`` (``engines.py``). The package itself is the plugin module the
``heta`` entry point names.
"""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_hirag.engines import (
    ENGINES,
    HiRagBridgeQueryEngine,
    HiRagGlobalQueryEngine,
    HiRagLocalQueryEngine,
    HiRagNobridgeQueryEngine,
    HiRagQueryEngine,
)
from heta_plugin_hirag.options import HiRagOptions
from heta_plugin_hirag.steps import STEPS, HierarchicalAggregation, HiRagBridges, HiRagCommunity

__all__ = [
    "HiRagBridgeQueryEngine",
    "HiRagBridges",
    "HiRagCommunity",
    "HiRagGlobalQueryEngine",
    "HiRagLocalQueryEngine",
    "HiRagNobridgeQueryEngine",
    "HiRagOptions",
    "HiRagQueryEngine",
    "HierarchicalAggregation",
    "register_query_engines",
    "register_steps",
]


@hookimpl
def register_steps(register):
    for step in STEPS:
        register(step)


@hookimpl
def register_query_engines(register):
    for engine in ENGINES:
        register(engine())
