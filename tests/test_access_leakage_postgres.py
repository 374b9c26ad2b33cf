"""The leakage suite with every store on a real PostgreSQL server: pgvector, tsvector full text, the graph tables,
the chunks, the objects and the knowledge base's state (the same first-party modes as on the embedded stores)."""

from __future__ import annotations

import uuid

import attrs
import pytest
from heta_framework.kb import StoreConfig
from heta_framework.testing.conformance import AccessLeakageSuite, build_leakage_kb
from heta_plugin_postgres.testing import drop_schema, postgres_dsn  # noqa: F401  (the session's server)

from tests.test_access_leakage import every_offline_mode_recipe

pytestmark = pytest.mark.slow
SLOTS = ("vector", "sql", "text", "graph", "objects", "state")


class TestEveryOfflineModeOnPostgres(AccessLeakageSuite):
    @pytest.fixture(scope="class")
    @classmethod
    def leak_kb(cls, postgres_dsn, tmp_path_factory):  # noqa: F811  (the fixture imported above)
        namespace = f"leak_{uuid.uuid4().hex[:10]}"
        stores = {slot: StoreConfig(type="postgres", options={"namespace": namespace}) for slot in SLOTS}
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("HETA_POSTGRES_DSN", postgres_dsn)
            kb = build_leakage_kb(tmp_path_factory.mktemp("leak-pg") / "kb", attrs.evolve(every_offline_mode_recipe(), stores=stores))
            try:
                yield kb
            finally:
                kb.close()
                drop_schema(postgres_dsn, namespace)

    def test_every_store_is_on_the_server(self, leak_kb):
        for slot in SLOTS:
            assert type(leak_kb.get_component(f"stores.{slot}")).__module__.startswith("heta_plugin_postgres."), slot
        assert {"vector_search", "full_text_search", "heta_graph_search", "graphrag_local_search", "lightrag_mix",
                "memory_search", "hi_rag_query", "lean_rag_query"} <= set(self.modes(leak_kb))
