"""The pgvector store passes core's vector-store suite on a real server, with HNSW and with IVFFlat."""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import VectorStoreSuite
from heta_plugin_postgres.vector_store import PostgresVectorConfig, PostgresVectorStore


class TestPgvectorHNSW(VectorStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self, postgres_namespace):
        # a wide beam: HNSW answers exactly at the suite's sizes
        config = PostgresVectorConfig(namespace=postgres_namespace, ef_search=400)
        return lambda root: PostgresVectorStore.open(config, root)


class TestPgvectorIVFFlat(VectorStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self, postgres_namespace):
        # every list probed: IVFFlat is then exact, whatever was clustered where
        config = PostgresVectorConfig(namespace=postgres_namespace, index="ivfflat", ivf_lists=4, ivf_probes=4,
                                      ivf_min_rows=50)
        return lambda root: PostgresVectorStore.open(config, root)
