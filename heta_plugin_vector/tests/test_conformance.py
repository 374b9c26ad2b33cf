"""The FAISS store passes core's vector-store conformance suite, with each index kind."""

from __future__ import annotations

import pytest

from heta_framework.testing.conformance import VectorStoreSuite
from heta_plugin_vector import FaissStoreConfig, FaissVectorStore


class TestFaissFlat(VectorStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return lambda root: FaissVectorStore.open(None, root)


class TestFaissHNSW(VectorStoreSuite):
    @pytest.fixture
    def store_factory(self):
        # below filter_exact_limit and with a wide search, HNSW answers exactly at the suite's sizes
        return lambda root: FaissVectorStore.open(FaissStoreConfig(index="hnsw", ef_search=512), root)
