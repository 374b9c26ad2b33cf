"""One knowledge base's life, offline: a graph alone, HiRAG added, a document added, a document deleted."""

from __future__ import annotations

import pytest
from heta_framework.errors import ModeUnavailableError
from heta_framework.kb import KnowledgeBase
from heta_plugin_graph.testing import DOCUMENTS, graph_recipe, offline_models
from heta_plugin_hirag.hierarchy import Hierarchy
from heta_plugin_hirag.testing import CURIE, MODES, hirag_recipe, step_stats, stored


def snapshot(kb: KnowledgeBase) -> dict:
    return {key: stored(kb, key) for key in ("hierarchy", "reports", "bridges")}


@pytest.fixture(scope="module")
def life(tmp_path_factory, hirag_registry):
    path = tmp_path_factory.mktemp("life") / "kb"
    seen: dict = {}
    with KnowledgeBase.create(path, graph_recipe(offline_models()), registry=hirag_registry) as kb:
        kb.sync.build(list(DOCUMENTS))
        try:
            kb.sync.query("oceans", mode="hi_rag_query")
        except ModeUnavailableError as exc:
            seen["unavailable"] = str(exc)
        seen["modes_before"] = set(kb.available_queries)
    with KnowledgeBase.create(path, hirag_recipe(offline_models()), registry=hirag_registry, exist_ok=True) as kb:
        seen["first"] = kb.sync.build(list(DOCUMENTS))
        seen["modes_after"] = set(kb.available_queries)
        seen["built"] = snapshot(kb)
        seen["added"] = kb.sync.build([CURIE])
        seen["with_curie"] = snapshot(kb)
        kb.sync.delete_documents(["space"])
        seen["deleted"] = snapshot(kb)
        seen["summary_vectors"] = len(kb.get_component("stores.vector").collection("hirag_summary_entities"))
        seen["answers"] = {mode: kb.sync.query("Who won the Nobel Prize in Physics?", mode=mode, top_k=10) for mode in MODES}
    return seen


def test_the_modes_need_the_steps(life):
    assert not set(MODES) & life["modes_before"]
    for asset in ("hirag_summary_entities", "hirag_community_reports", "hirag_bridge_paths"):
        assert f"asset {asset} is not built" in life["unavailable"]
    assert set(MODES) <= life["modes_after"] and life["first"].issues == []


def clusters_of(snapshot: dict) -> dict[str, dict]:
    return {c["id"]: c for layer in snapshot["hierarchy"]["layers"] for c in layer["clusters"]}


def test_adding_a_document_summarises_only_the_clusters_it_touches(life):
    before, after = clusters_of(life["built"]), clusters_of(life["with_curie"])
    stats = step_stats(life["added"], "hirag_hierarchical_aggregation")
    kept = [cid for cid in after if cid in before]
    assert kept, "untouched clusters are kept as they were"
    assert all(after[cid]["summary"] == before[cid]["summary"] for cid in kept if "summary" in after[cid])
    summarised = sum(1 for c in after.values() if "summary" in c)
    assert 0 < stats["summaries_written"] < summarised and stats["summaries_reused"] == summarised - stats["summaries_written"]
    shanghai = [c for c in after.values() if c.get("document_ids") == ["shanghai"]]
    assert shanghai and all(c["id"] in before for c in shanghai)  # the Chinese document's cluster was not touched
    assert any("curie" in c.get("document_ids", ()) and "space" in c["document_ids"] for c in after.values())
    reports = step_stats(life["added"], "hirag_community")
    assert reports["communities_reported"] > 0 and reports["community_reports_reused"] > 0
    bridges = step_stats(life["added"], "hirag_bridges")
    assert bridges["bridge_sources_recomputed"] > 0


def test_deleting_a_document_removes_what_rests_on_it(life):
    deleted = life["deleted"]
    summaries = Hierarchy.from_json(deleted["hierarchy"]).summaries()
    assert summaries and not any("space" in s.document_ids for s in summaries.values())
    assert life["summary_vectors"] == len(summaries)
    assert not any("space" in e["document_ids"] for e in deleted["reports"]["reports"].values())
    paths = [p for found in deleted["bridges"]["bridges"].values() for p in found.values()]
    assert not any("space" in p["document_ids"] for p in paths)
    for mode, response in life["answers"].items():
        assert response.results and all(r.document_id != "space" for r in response.results), mode
        assert "Einstein" not in response.metadata["context"], mode
