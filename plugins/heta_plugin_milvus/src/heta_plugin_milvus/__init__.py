"""heta-plugin-milvus: a ``stores.vector`` type ``milvus`` on pymilvus's ``MilvusClient``.

Milvus Lite (a local ``.db`` file inside the knowledge base, ``pip install
heta-plugin-milvus[lite]``) or a Milvus server/cluster (``uri = "http://host:19530"``).
"""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_milvus.vector_store import VECTOR_STORE_TYPE


@hookimpl
def register_stores(register):
    register(VECTOR_STORE_TYPE)
