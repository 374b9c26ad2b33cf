"""heta-plugin-lightrag: LightRAG's query modes over the graph plugin's entities, relations and evidence.

Modes: ``lightrag_local``, ``lightrag_global``, ``lightrag_hybrid`` and
``lightrag_mix`` (``engines.py``). They need the graph plugin's assets
(``graph_tables``, ``graph_vector_index``; mix also ``chunk_vector_index``) and
the embedding model; a language model (``models.language``) is used for the
query's keywords when the recipe has one, else they are found offline. The
package itself is the plugin module the ``heta`` entry point names.
"""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_lightrag.engines import (
    ENGINES,
    LightRagGlobalEngine,
    LightRagHybridEngine,
    LightRagLocalEngine,
    LightRagMixEngine,
)
from heta_plugin_lightrag.keywords import Keywords
from heta_plugin_lightrag.options import LightRagMixOptions, LightRagOptions

__all__ = [
    "Keywords",
    "LightRagGlobalEngine",
    "LightRagHybridEngine",
    "LightRagLocalEngine",
    "LightRagMixEngine",
    "LightRagMixOptions",
    "LightRagOptions",
    "register_query_engines",
]


@hookimpl
def register_query_engines(register):
    for engine in ENGINES:
        register(engine())
