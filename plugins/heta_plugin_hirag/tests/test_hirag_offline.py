"""The three steps and the five modes over a real nlp-built graph, offline (extractive summaries and reports)."""

from __future__ import annotations

import pytest
from heta_framework.errors import HetaError
from heta_framework.kb import KnowledgeBase
from heta_plugin_graphrag.communities import Detection
from heta_plugin_hirag.hierarchy import Hierarchy
from heta_plugin_hirag.testing import MODES, stored

SECTIONS = {
    "hi_rag_query": {"reports", "reasoning_path", "entities"},
    "hi_rag_nobridge_query": {"reports", "entities", "relations"},
    "hi_rag_local_query": {"entities", "relations"},
    "hi_rag_global_query": {"reports"},
    "hi_rag_bridge_query": {"reasoning_path"},
}
TITLES = {"reports": "Backgrounds", "reasoning_path": "Reasoning Path", "relations": "Relationships"}


@pytest.fixture(scope="module")
def kb(offline_kb_path, hirag_registry):
    with KnowledgeBase.load(offline_kb_path, registry=hirag_registry) as opened:
        yield opened


def test_the_steps_build_layers_communities_and_bridges_beside_the_graph_not_in_it(kb):
    assert set(MODES) <= set(kb.available_queries)
    hierarchy = Hierarchy.from_json(stored(kb, "hierarchy"))
    graph = kb.get_component("stores.graph")
    base = set(graph.entity_ids())
    assert hierarchy.layers and set(hierarchy.layers[0].inputs) == base  # layer 1 clusters every graph entity
    found = hierarchy.summaries()
    assert found and {s.layer for s in found.values()} == set(range(1, len(hierarchy.layers) + 1))
    documents = {e: {row[1] for row in rows} for e, rows in graph.evidence("entity", sorted(base)).items()}
    for summary in found.values():
        assert summary.source == "extractive" and len(summary.members) > 1
        below = set().union(*(documents[m] if m in base else found[m].document_ids for m in summary.members))
        assert summary.document_ids == below  # a summary rests on every document its members rest on
    # nothing of HiRAG in the graph's tables or its vectors: the other graph modes never see a summary entity
    assert not any(i.startswith("hirag:") for i in base)
    vectors = kb.get_component("stores.vector")
    assert not any(vectors.collection("graph_entities").contains(sorted(found)))
    assert len(vectors.collection("hirag_summary_entities")) == len(found)
    response = kb.sync.query("Pacific Ocean, South America", mode="heta_graph_search", top_k=20)
    assert response.results and not any("hirag" in r.id for r in response.results)

    communities = Detection.from_json(stored(kb, "communities")).communities
    reports = stored(kb, "reports")["reports"]
    assert communities and set(reports) == {c.id for c in communities}
    assert any(m in found for c in communities for m in c.entity_ids)  # communities of the layered graph
    assert all(e["source"] == "extractive" and e["document_ids"] for e in reports.values())

    bridges = stored(kb, "bridges")
    paths = [p for found_paths in bridges["bridges"].values() for p in found_paths.values()]
    assert paths and set(bridges["bridges"]) == set(reports)
    relations = {r.id for r in graph.relations_touching(sorted(base))}
    for path in paths:
        assert len(path["nodes"]) == len(path["edges"]) + 1 >= 2 and path["document_ids"]
        assert all(e in relations or e.startswith("hirag-edge:") for e in path["edges"])


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_returns_sources_with_provenance_and_its_own_sections(kb, mode):
    response = kb.sync.query("Which prize did Marie Curie win?", mode=mode, top_k=3)
    assert response.results and response.results[0].document_id == "space"
    assert all(r.kind == "chunk" and r.document_id and r.metadata["source"] for r in response.results)
    meta = response.metadata
    shown = {key for key in ("reports", "reasoning_path", "entities", "relations") if key in meta}
    assert shown == SECTIONS[mode]
    assert all(meta[key] for key in shown), {key: meta[key] for key in shown}
    for section in SECTIONS[mode]:
        assert all(item["document_ids"] for item in meta[section])
        if section in TITLES:
            assert f"-----{TITLES[section]}-----" in meta["context"]
    assert "-----Source Documents-----" in meta["context"] and response.results[0].text.split(".")[0] in meta["context"]
    assert [i["code"] for i in response.issues] == ["hirag_no_language_model"]


def test_local_query_finds_graph_and_summary_entities(kb):
    response = kb.sync.query("Albert Einstein relativity", mode="hi_rag_local_query", top_k=3)
    entities = response.metadata["entities"]
    assert "Albert Einstein" in [e["name"] for e in entities if e["layer"] == 0]
    assert any(e["layer"] > 0 and "Albert Einstein" in e["description"] for e in entities)  # the summary above it
    assert any("Albert Einstein" in (r["source"], r["target"]) for r in response.metadata["relations"])


def test_the_reasoning_path_links_chosen_communities_of_one_level(kb):
    response = kb.sync.query("Marie Curie and the Pacific Ocean", mode="hi_rag_bridge_query", top_k=5, options={"llm_answer": False})
    path = response.metadata["reasoning_path"]
    assert path and "issues" not in response.metadata
    levels = stored(kb, "bridges")["levels"]
    for link in path:
        assert levels[link["from_community"]] == levels[link["to_community"]]
        assert len(link["edges"]) == len(link["nodes"]) - 1
        assert [step["source"] for step in link["edges"]] == link["nodes"][:-1]


def test_options_level_single_community_budgets_and_no_answer(kb):
    text = "Which prize did Marie Curie win?"
    coarse = kb.sync.query(text, mode="hi_rag_global_query", options={"level": 0, "llm_answer": False})
    assert coarse.metadata["reports"] and {r["level"] for r in coarse.metadata["reports"]} == {0} and "issues" not in coarse.metadata
    one = kb.sync.query(text, mode="hi_rag_global_query", options={"community_single_one": True})
    assert len(one.metadata["reports"]) == 1
    tight = kb.sync.query(text, mode="hi_rag_nobridge_query", top_k=10,
                          options={"max_token_for_text_unit": 1, "max_token_for_community_report": 1, "max_token_for_local_context": 1})
    assert len(tight.results) == 1 and len(tight.metadata["reports"]) == 1 and tight.metadata["relations"] == []
    few = kb.sync.query(text, mode="hi_rag_local_query", options={"entity_top_k": 2})
    assert len(few.metadata["entities"]) == 2


@pytest.mark.parametrize("options", [{"entity_top_k": 0}, {"level": -1}, {"community_single_one": "yes"}, {"response_type": ""},
                                     {"max_token_for_text_unit": 0}, {"top_m": 3}])
def test_bad_options_are_refused(kb, options):
    with pytest.raises(HetaError):
        kb.sync.query("oceans", mode="hi_rag_query", options=options)


def test_a_document_filter_keeps_derived_knowledge_inside_it(kb):
    for mode in MODES:
        response = kb.sync.query("Marie Curie and the Pacific Ocean", mode=mode, top_k=10, filters={"document_id": "space"})
        assert response.results and {r.document_id for r in response.results} == {"space"}
        for section in ("reports", "reasoning_path", "entities"):
            for item in response.metadata.get(section, ()):
                assert set(item["document_ids"]) <= {"space"}, (mode, section, item)


def test_hostile_and_cjk_queries(kb):
    for mode in MODES:
        for text in ("", "'; DROP TABLE entities; --", "上海"):
            assert kb.sync.query(text, mode=mode, top_k=3) is not None
    cjk = kb.sync.query("上海港", mode="hi_rag_global_query", top_k=1, options={"llm_answer": False})
    assert cjk.results[0].document_id == "shanghai"
