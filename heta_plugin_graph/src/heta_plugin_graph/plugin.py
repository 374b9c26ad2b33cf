"""The graph plugin's hook implementations: steps, the ``heta_graph`` procedure, the store, the engine."""

from __future__ import annotations

from heta_framework.kb.stores import StoreType
from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_graph.engine import HetaGraphSearchEngine
from heta_plugin_graph.procedure import HetaGraphProcedure
from heta_plugin_graph.steps import ALL_STEPS
from heta_plugin_graph.store import SQLiteGraphStore, SQLiteGraphStoreConfig

GRAPH_STORE_TYPE = StoreType(
    name="sqlite_graph",
    slot="graph",
    factory=SQLiteGraphStore.open,
    config_type=SQLiteGraphStoreConfig,
    default=True,
    description="SQLite tables: entities, relations, evidence and evidence chunk text",
)


@hookimpl
def register_steps(register):
    for step in ALL_STEPS:
        register(step)


@hookimpl
def register_procedures(register):
    register(HetaGraphProcedure)


@hookimpl
def register_query_engines(register):
    register(HetaGraphSearchEngine())


@hookimpl
def register_stores(register):
    register(GRAPH_STORE_TYPE)
