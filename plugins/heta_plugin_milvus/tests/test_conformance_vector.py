"""The Milvus store passes core's vector-store suite on real Milvus Lite, with each index type Lite builds.

``server_backed``: every collection sits in one Lite file, so no path belongs to a
single collection and ``relative_paths`` is empty, as for a server.
"""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import VectorStoreSuite
from heta_plugin_milvus.config import MilvusVectorConfig
from heta_plugin_milvus.vector_store import MilvusVectorStore


class TestMilvusLiteFlat(VectorStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self):
        return lambda root: MilvusVectorStore.open(MilvusVectorConfig(index="FLAT"), root)


class TestMilvusLiteHNSW(VectorStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self):
        # a wide beam: HNSW answers exactly at the suite's sizes
        config = MilvusVectorConfig(index="HNSW", ef_search=512, ef_construction=256)
        return lambda root: MilvusVectorStore.open(config, root)


class TestMilvusLiteAutoindex(VectorStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self):
        return lambda root: MilvusVectorStore.open(MilvusVectorConfig(), root)
