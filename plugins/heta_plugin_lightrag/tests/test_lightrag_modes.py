"""The four modes over a real nlp-built graph, offline keywords, budgets, options, hostile queries, `heta modes`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from heta_framework.builtin.text_split import count_tokens
from heta_framework.errors import HetaError, InvalidQueryError
from heta_plugin_lightrag.offline import low_level_keywords, matching_labels

MODES = ("lightrag_local", "lightrag_global", "lightrag_hybrid", "lightrag_mix")


async def test_four_modes_are_available_and_answer_from_the_graph(offline_kb):
    assert set(MODES) <= set(offline_kb.available_queries)
    for mode in MODES:
        response = await offline_kb.query("Where do blue whales feed?", mode=mode, top_k=8)
        assert response.results, mode
        assert response.metadata["keywords"]["source"] == "offline"
        assert "issues" not in response.metadata, mode  # offline keywords are the designed path, not a problem
        kinds = {r.kind for r in response.results}
        assert kinds & {"entity", "relation"}, mode
        # every fact carries the chunks that evidence it, and those come from the documents
        evidence = [e for r in response.results if r.kind != "chunk" for e in r.evidence]
        assert evidence and all(e.kind == "chunk" and e.metadata["evidence_for"] for e in evidence), mode
        assert "ocean" in {e.document_id for e in evidence}, mode
    mix = await offline_kb.query("Where do blue whales feed?", mode="lightrag_mix", top_k=8)
    assert "chunk" in {r.kind for r in mix.results}  # mix fuses vector_search's chunks in


async def test_local_follows_entities_and_global_follows_relations(offline_kb):
    local = await offline_kb.query("Marie Curie", mode="lightrag_local", top_k=10)
    top_entity = next(r for r in local.results if r.kind == "entity")
    assert top_entity.metadata["name"].casefold() == "marie curie"
    assert local.metadata["context"]["relations_found"] > 0  # her one-hop relations came with her
    global_ = await offline_kb.query("Marie Curie", mode="lightrag_global", top_k=10)
    relations = [r for r in global_.results if r.kind == "relation"]
    assert relations and global_.metadata["context"]["entities_found"] >= 2  # relation endpoints
    assert any("Marie Curie" in (r.metadata["source"], r.metadata["target"]) for r in relations)


async def test_token_budgets_bound_the_context(offline_kb):
    query = "Pacific Ocean whales reefs rivers"
    full = await offline_kb.query(query, mode="lightrag_hybrid", top_k=50)
    ctx = full.metadata["context"]
    assert ctx["entities"] > 2 and ctx["relations"] > 2 and ctx["chunks"] >= 2
    tight = await offline_kb.query(
        query, mode="lightrag_hybrid", top_k=50,
        options={"max_entity_tokens": 25, "max_relation_tokens": 30, "max_total_tokens": count_tokens(query) + 25 + 30 + 40},
    )
    small = tight.metadata["context"]
    assert 0 < small["entities"] < ctx["entities"] and small["entity_tokens"] <= 25
    assert 0 < small["relations"] < ctx["relations"] and small["relation_tokens"] <= 30
    assert small["chunk_tokens"] <= small["chunk_budget"] <= 40 + (25 - small["entity_tokens"]) + (30 - small["relation_tokens"])
    facts = [r for r in tight.results if r.kind in ("entity", "relation")]
    assert sum(count_tokens(r.text) for r in facts if r.kind == "entity") <= 25
    assert sum(count_tokens(r.text) for r in facts if r.kind == "relation") <= 30
    chunks = {e.id: e.text for r in tight.results for e in r.evidence}
    assert sum(count_tokens(t) for t in chunks.values()) <= small["chunk_budget"]
    none = await offline_kb.query(query, mode="lightrag_local", top_k=50, options={"chunk_top_k": 0})
    assert none.metadata["context"]["chunks"] == 0 and all(not r.evidence for r in none.results)


async def test_graph_top_k_and_threshold_limit_the_search(offline_kb):
    one = await offline_kb.query("Pacific Ocean", mode="lightrag_local", top_k=50, options={"graph_top_k": 1})
    assert one.metadata["context"]["entities_found"] == 1
    nothing = await offline_kb.query("Pacific Ocean", mode="lightrag_local", top_k=50, options={"cosine_threshold": 1.0})
    assert not nothing.results and nothing.metadata["context"]["entities_found"] == 0


async def test_bad_options_are_refused_with_their_name(offline_kb):
    with pytest.raises(HetaError, match="max_total_tokens"):
        await offline_kb.query("whales", mode="lightrag_local", options={"max_total_tokens": 0})
    with pytest.raises(HetaError, match="rrf_k"):
        await offline_kb.query("whales", mode="lightrag_local", options={"rrf_k": 10})  # a mix-only option


@pytest.mark.parametrize("query", ["'; DROP TABLE entities; --", "%_*\\\" OR 1=1", "?!", "a" * 5000, "\u202e whales"])
async def test_hostile_queries_are_just_text(offline_kb, query):
    for mode in MODES:
        response = await offline_kb.query(query, mode=mode, top_k=5)
        assert "issues" not in response.metadata, (mode, response.metadata)
        assert {r.kind for r in response.results} <= {"entity", "relation", "chunk"}
        assert len(response.results) <= 5
        low = response.metadata["keywords"]["low_level_keywords"]
        assert all(len(k) <= 200 for k in low)  # a 5000-character query is not one 5000-character keyword
    again = await offline_kb.query("Blue whales", mode="lightrag_local", top_k=5)
    assert again.results  # the graph is intact


async def test_a_nul_in_the_query_is_refused_as_in_every_mode(offline_kb):
    for mode in MODES:
        with pytest.raises(InvalidQueryError, match="NUL character"):
            await offline_kb.query("\x00 whales", mode=mode, top_k=5)


async def test_empty_query(offline_kb):
    for mode in MODES:
        response = await offline_kb.query("   ", mode=mode, top_k=5)
        keywords = response.metadata["keywords"]
        assert keywords["low_level_keywords"] == [] and keywords["high_level_keywords"] == []
        assert "issues" not in response.metadata


async def test_chinese_query_finds_the_chinese_document(offline_kb):
    response = await offline_kb.query("上海港", mode="lightrag_local", top_k=5)
    keywords = response.metadata["keywords"]["low_level_keywords"]
    assert keywords and all(not k.isascii() for k in keywords)
    assert "shanghai" in {e.document_id for r in response.results for e in r.evidence}


def test_offline_low_level_keywords_are_phrases_and_cjk_sane():
    assert "Marie Curie" in low_level_keywords("Which prize did Marie Curie win?")
    assert low_level_keywords("what is it?") == ()  # only stop words: nothing to look up
    chinese = low_level_keywords("长江流入哪里?")
    assert chinese and all(len(k) >= 2 for k in chinese)
    japanese = low_level_keywords("東京タワーはどこ")
    assert japanese and all(len(k) >= 2 for k in japanese)  # no single characters, no whole unsplit run only


def test_offline_high_level_keywords_are_the_graph_labels_the_query_matches():
    labels = ["person", "located_in", "founded_by", "co_occurs_with", "organization"]
    assert matching_labels("Who founded the company?", labels) == ["founded_by"]
    assert matching_labels("Where is it located?", labels) == ["located_in"]
    assert matching_labels("anything that co-occurs", labels) == []  # generic labels say nothing


def test_heta_modes_lists_the_four_modes(offline_kb):
    heta = Path(sys.executable).with_name("heta")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    out = subprocess.run([str(heta), "--kb", str(offline_kb.path), "modes", "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {row["mode"]: row for row in json.loads(out.stdout)["modes"]}
    for mode in MODES:
        assert rows[mode]["available"] and rows[mode]["provided_by"] == "heta-plugin-lightrag"


async def test_upstream_mode_names_run_our_modes(offline_kb):
    for level in ("local", "global", "hybrid", "mix"):
        by_alias = await offline_kb.query("Pacific Ocean", mode=f"light_rag_{level}_query", top_k=5)
        by_name = await offline_kb.query("Pacific Ocean", mode=f"lightrag_{level}", top_k=5)
        assert by_alias.metadata["mode"] == f"lightrag_{level}"
        assert [r.id for r in by_alias.results] == [r.id for r in by_name.results] and by_name.results
