"""heta-server: ``heta serve`` (an HTTP API and a console over a loaded knowledge base) and ``memory_search``.

The package is also a Heta plugin (entry point ``heta``): it registers the query mode
``memory_search``. Importing it does not import FastAPI or uvicorn; ``heta_server.app``
and ``heta_server.serve`` do.
"""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl

from heta_server.memory_engine import MemorySearchEngine
from heta_server.memory_options import MemorySearchOptions

__all__ = ["MemorySearchEngine", "MemorySearchOptions"]


@hookimpl
def register_query_engines(register):
    register(MemorySearchEngine())
