"""``leanrag_aggregate`` and ``lean_rag_query`` with every store on a real PostgreSQL server (pgvector, the graph tables,
the object store, the knowledge base's state): the hierarchy needs nothing of the folder stores."""

from __future__ import annotations

import json
import uuid

import attrs
import pytest
from heta_framework.kb import KnowledgeBase, StoreConfig
from heta_framework.testing import make_registry
from heta_plugin_graph.testing import DOCUMENTS, offline_models
from heta_plugin_leanrag.testing import MODE, hierarchy_of, recipe
from heta_plugin_postgres.testing import drop_schema, postgres_dsn  # noqa: F401  (the session's server)

pytestmark = pytest.mark.slow
SLOTS = ("vector", "sql", "graph", "objects", "state")
PHYSICS = "group:physics"
PLUGINS = ("heta_plugin_vector", "heta_plugin_local", "heta_plugin_graph", "heta_plugin_openai", "heta_plugin_leanrag", "heta_plugin_postgres")


@pytest.fixture
def postgres_kb(postgres_dsn, local_model, tmp_path, monkeypatch):  # noqa: F811  (the fixture imported above)
    monkeypatch.setenv("HETA_POSTGRES_DSN", postgres_dsn)
    namespace = f"leanrag_{uuid.uuid4().hex[:10]}"
    stores = {slot: StoreConfig(type="postgres", options={"namespace": namespace}) for slot in SLOTS}
    registry = make_registry(*PLUGINS)
    kb = KnowledgeBase.create(tmp_path / "kb", attrs.evolve(recipe(offline_models()), stores=stores), registry=registry)
    try:
        yield kb
    finally:
        kb.close()
        drop_schema(postgres_dsn, namespace)


def test_the_hierarchy_and_the_mode_on_postgres(postgres_kb):
    kb = postgres_kb
    public = [d for d in DOCUMENTS if d.id != "space"]
    assert kb.sync.build(public).issues == []
    assert kb.sync.build([d for d in DOCUMENTS if d.id == "space"], access=[PHYSICS]).issues == []
    for slot in SLOTS:
        assert type(kb.get_component(f"stores.{slot}")).__module__.startswith("heta_plugin_postgres."), slot
    assert not (kb.path / "objects" / "leanrag").exists()  # the hierarchy is a row of the server's object store
    stored = hierarchy_of(kb)
    assert stored["aggregates"] and set(stored["parents"]) == set(kb.get_component("stores.graph").entity_ids())
    assert len(kb.get_component("stores.vector").collection("leanrag_aggregates")) == len(stored["aggregates"])

    for level_mode in (0, 1, 2):
        outsider = kb.sync.query("Albert Einstein relativity", mode=MODE, top_k=20, options={"level_mode": level_mode})
        text = json.dumps(outsider.to_dict(), ensure_ascii=False)
        assert outsider.results and "Einstein" not in text and '"space"' not in text, level_mode
        reader = kb.sync.query("Albert Einstein relativity", mode=MODE, top_k=20, principals=[PHYSICS], options={"level_mode": level_mode})
        assert any("space" in r.metadata["document_ids"] for r in reader.results), level_mode

    kb.sync.delete_documents(["rivers"])
    after = hierarchy_of(kb)
    assert not any("rivers" in r["documents"] for r in after["aggregates"].values())
    assert len(kb.get_component("stores.vector").collection("leanrag_aggregates")) == len(after["aggregates"])
