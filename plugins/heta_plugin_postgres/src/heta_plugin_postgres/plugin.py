"""The plugin's hook implementations: one ``register(...)`` line per store type, each from its own module."""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_postgres.graph_store import GRAPH_STORE_TYPE
from heta_plugin_postgres.object_store import OBJECT_STORE_TYPE
from heta_plugin_postgres.sql_store import SQL_STORE_TYPE
from heta_plugin_postgres.state import STATE_STORE_TYPE
from heta_plugin_postgres.text_store import TEXT_STORE_TYPE
from heta_plugin_postgres.vector_store import VECTOR_STORE_TYPE


@hookimpl
def register_stores(register):
    register(VECTOR_STORE_TYPE)
    register(OBJECT_STORE_TYPE)
    register(SQL_STORE_TYPE)
    register(TEXT_STORE_TYPE)
    register(GRAPH_STORE_TYPE)
    register(STATE_STORE_TYPE)
