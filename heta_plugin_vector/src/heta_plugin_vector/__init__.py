"""heta-plugin-vector: the ``faiss`` vector store, ``EmbedChunks``, ``IndexVectors`` and ``vector_search``.

Installed, it is found through the ``heta`` entry-point group; these hook
implementations register everything it provides.
"""

from __future__ import annotations

from heta_framework.kb.stores import StoreType
from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_vector.collection import FaissCollection
from heta_plugin_vector.config import FaissStoreConfig
from heta_plugin_vector.engine import VectorSearchEngine
from heta_plugin_vector.steps import CHUNK_VECTOR_ASSET, EmbedChunks, IndexVectors
from heta_plugin_vector.store import FaissVectorStore

__all__ = [
    "CHUNK_VECTOR_ASSET",
    "EmbedChunks",
    "FaissCollection",
    "FaissStoreConfig",
    "FaissVectorStore",
    "IndexVectors",
    "VectorSearchEngine",
]


@hookimpl
def register_stores(register):
    register(
        StoreType(
            name="faiss",
            slot="vector",
            factory=FaissVectorStore.open,
            config_type=FaissStoreConfig,
            default=True,
            description="FAISS files (flat, HNSW or IVF) with SQLite metadata",
        )
    )


@hookimpl
def register_steps(register):
    register(EmbedChunks)
    register(IndexVectors)


@hookimpl
def register_query_engines(register):
    register(VectorSearchEngine())
