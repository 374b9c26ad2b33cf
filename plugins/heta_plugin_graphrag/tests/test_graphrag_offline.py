"""Communities, extractive reports and both modes over a real nlp-built graph, offline; incremental adds and deletions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from heta_framework.errors import HetaError
from heta_framework.kb import SourceDocument
from heta_plugin_graphrag.communities import Detection, DetectionSettings, detect

MODES = ("graphrag_global_search", "graphrag_local_search")
CURIE = SourceDocument(id="curie", name="curie.txt", text="Marie Curie discovered polonium in Paris. Marie Curie taught at the Sorbonne.")


def stats(report, step: str) -> dict:
    return next(s.stats for s in report.steps if s.name == step)


def stored(kb) -> tuple[dict, dict]:
    objects = kb.get_component("stores.objects")
    return objects.get_json("graphrag/communities.json"), objects.get_json("graphrag/reports.json")["reports"]


def chunk_ids_of(kb) -> set[str]:
    graph = kb.get_component("stores.graph")
    return {row[0] for rows in graph.evidence("entity", graph.entity_ids()).values() for row in rows}


async def test_build_publishes_the_modes_and_one_extractive_report_per_community(offline_kb):
    for mode in MODES:
        assert mode in offline_kb.available_queries
    detection, reports = stored(offline_kb)
    communities = Detection.from_json(detection).communities
    assert communities and set(reports) == {c.id for c in communities}
    graph = offline_kb.get_component("stores.graph")
    for community in communities:
        entry = reports[community.id]
        assert entry["source"] == "extractive" and entry["content_hash"] == community.content_hash
        report = entry["report"]
        assert set(report) == {"title", "summary", "findings", "rating", "rating_explanation"}
        names = {e.name for e in graph.get_entities(list(community.entity_ids)).values()}
        assert any(name in report["title"] for name in names)  # the title names the community's own entities
        assert 0 <= report["rating"] <= 10 and report["findings"]
        assert set(entry["chunk_ids"]) <= chunk_ids_of(offline_kb)


async def test_detection_is_deterministic_and_hierarchical(offline_kb):
    graph = offline_kb.get_component("stores.graph")
    settings = DetectionSettings(max_cluster_size=2, max_levels=3, resolution=0.05, sublevel_resolution_factor=20.0)
    first = detect(graph, Detection(), settings).detection.to_json()
    assert first == detect(graph, Detection(), settings).detection.to_json()  # fixed seed, sorted input
    communities = Detection.from_json(first).communities
    by_id = {c.id: c for c in communities}
    children = [c for c in communities if c.level > 0]
    assert children, "a component larger than max_cluster_size is split one level down"
    for child in children:
        parent = by_id[child.parent]
        assert parent.level == child.level - 1 and set(child.entity_ids) < set(parent.entity_ids)
    # the same graph seen again with its previous detection: every component is kept, nothing re-detected
    again = detect(graph, Detection.from_json(first), settings)
    assert again.components_redetected == 0 and again.communities_changed == () and again.communities_removed == ()


async def test_adding_a_document_redetects_only_the_touched_component(offline_kb):
    before, reports_before = stored(offline_kb)
    report = await offline_kb.build([CURIE])
    detect_stats, report_stats = stats(report, "detect_communities"), stats(report, "community_reports")
    after, reports_after = stored(offline_kb)
    total = len(Detection.from_json(after).communities)
    assert 0 < report_stats["communities_reported"] < total
    assert report_stats["communities_reported"] == detect_stats["communities_redetected"]
    assert detect_stats["components_kept"] > 0 and detect_stats["components_redetected"] >= 1
    unchanged = set(reports_before) & set(reports_after)
    assert unchanged and all(reports_before[c] == reports_after[c] for c in unchanged)
    assert any("Curie" in entry["report"]["title"] and "curie-00000" in entry["chunk_ids"] for entry in reports_after.values())


async def test_deleting_a_document_removes_its_communities_and_reports(offline_kb):
    _, reports_before = stored(offline_kb)
    await offline_kb.delete_documents(["space"])
    _, reports_after = stored(offline_kb)
    assert set(reports_after) < set(reports_before)
    assert not any("Einstein" in e["report"]["title"] or "Curie" in e["report"]["title"] for e in reports_after.values())
    response = await offline_kb.query("Who won the Nobel Prize in Physics?", mode="graphrag_global_search", top_k=10)
    assert all(r.document_id != "space" for r in response.results)
    vectors = offline_kb.get_component("stores.vector").collection("graphrag_reports")
    assert len(vectors) == len(reports_after)


async def test_global_search_returns_the_best_reports_supporting_chunks_with_provenance(offline_kb):
    response = await offline_kb.query("Who won the Nobel Prize?", mode="graphrag_global_search", top_k=3)
    assert response.results[0].document_id == "space"
    top = response.results[0]
    assert top.kind == "chunk" and top.metadata["community_id"] and top.metadata["report_title"]
    reports = response.metadata["reports"]
    assert reports[0]["community_id"] == top.metadata["community_id"]
    assert [r["score"] for r in reports] == sorted((r["score"] for r in reports), reverse=True)
    assert [i["code"] for i in response.metadata["issues"]] == ["graphrag_no_language_model"]
    quiet = await offline_kb.query("Who won the Nobel Prize?", mode="graphrag_global_search", options={"llm_answer": False})
    assert "issues" not in quiet.metadata


async def test_global_search_budget_level_and_filters(offline_kb):
    one = await offline_kb.query("oceans and rivers", mode="graphrag_global_search", top_k=10, options={"report_top_k": 1, "llm_answer": False})
    assert len(one.metadata["reports"]) == 1
    tight = await offline_kb.query("oceans and rivers", mode="graphrag_global_search", options={"max_report_tokens": 1, "llm_answer": False})
    assert tight.metadata["reports"] == [] and not tight.results
    none = await offline_kb.query("oceans", mode="graphrag_global_search", options={"level": 7, "llm_answer": False})
    assert [i["code"] for i in none.metadata["issues"]] == ["empty_graph"]
    filtered = await offline_kb.query("oceans and rivers", mode="graphrag_global_search", top_k=10,
                                      filters={"document_id": "rivers"}, options={"llm_answer": False})
    assert filtered.results and {r.document_id for r in filtered.results} == {"rivers"}


async def test_local_search_finds_the_text_units_of_the_nearest_entities(offline_kb):
    response = await offline_kb.query("Albert Einstein relativity", mode="graphrag_local_search", top_k=5)
    assert response.results[0].document_id == "space"
    meta = response.metadata
    assert any(e["name"] == "Albert Einstein" for e in meta["entities"])
    assert any("Einstein" in r["title"] for r in meta["reports"])
    assert meta["context"]["text_unit_tokens"] <= meta["context"]["budget"] * 0.5
    small = await offline_kb.query("Albert Einstein relativity", mode="graphrag_local_search",
                                   options={"max_tokens": 30, "text_unit_prop": 0.1, "community_prop": 0.1})
    assert not small.results and small.metadata["reports"] == []


@pytest.mark.parametrize("mode,options", [("graphrag_global_search", {"report_top_k": 0}), ("graphrag_global_search", {"level": -1}),
                                          ("graphrag_local_search", {"community_prop": 0.8, "text_unit_prop": 0.5}),
                                          ("graphrag_local_search", {"unknown": 1})])
async def test_bad_options_are_refused(offline_kb, mode, options):
    with pytest.raises(HetaError):
        await offline_kb.query("oceans", mode=mode, options=options)


async def test_hostile_and_empty_queries(offline_kb):
    for text in ("", "'; DROP TABLE entities; --", "上海"):
        for mode in MODES:
            response = await offline_kb.query(text, mode=mode, top_k=3, options={"llm_answer": False} if "global" in mode else {})
            assert response is not None
    cjk = await offline_kb.query("上海港", mode="graphrag_global_search", top_k=1, options={"llm_answer": False})
    assert cjk.results[0].document_id == "shanghai"


def test_heta_modes_lists_both_modes(offline_kb_path):
    heta = Path(sys.executable).with_name("heta")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    out = subprocess.run([str(heta), "--kb", str(offline_kb_path), "modes", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {row["mode"]: row for row in json.loads(out.stdout)["modes"]}
    for mode in MODES:
        assert rows[mode]["available"] and rows[mode]["provided_by"] == "heta-plugin-graphrag"


async def test_upstream_mode_names_run_our_modes(offline_kb):
    for level in ("local", "global"):
        by_alias = await offline_kb.query("Pacific Ocean", mode=f"graph_rag_{level}_query", top_k=5)
        assert by_alias.metadata["mode"] == f"graphrag_{level}_search"
        assert [r.id for r in by_alias.results] == [r.id for r in (await offline_kb.query("Pacific Ocean", mode=f"graphrag_{level}_search", top_k=5)).results]
