"""memory_search on real knowledge bases: RRF order at relevance-only weights, the composite on a constructed set,
last-access updates, tags, related through the graph, missing legs, the reranker."""

from __future__ import annotations

import time

import pytest
from heta_framework.builtin.engines.fusion import RankedList, reciprocal_rank_fusion
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.errors import InvalidQueryError
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry
from heta_server.memory_access import access_log
from heta_server.memory_engine import LEGS


def full_text_recipe() -> Recipe:
    from heta_plugin_fulltext import IndexFullText

    return Recipe(steps=[ParseDocuments(), SplitDocuments(), IndexFullText()])

RELEVANCE_ONLY = {"weight_recency": 0, "weight_importance": 0, "weight_relevance": 1, "update_access": False}


@pytest.fixture
async def kb(kb_copy):
    knowledge_base = KnowledgeBase.load(kb_copy)
    yield knowledge_base
    knowledge_base.close()


async def expected_rrf_order(kb, text, top_k, candidates):
    """What fusing the three legs by RRF gives, computed here from each leg's own results."""
    lists = [RankedList(leg, (await kb.query(text, mode=leg, top_k=candidates)).results) for leg in LEGS]
    return [r.id for r in reciprocal_rank_fusion(lists) if r.kind == "chunk"][:top_k]


@pytest.mark.parametrize("question", ["Who discovered penicillin?", "animals in the ocean", "programming language"])
async def test_with_only_relevance_weighted_the_order_is_the_rrf_order(kb, question):
    response = await kb.query(question, mode="memory_search", top_k=4, options=RELEVANCE_ONLY)
    assert [r.id for r in response.results] == await expected_rrf_order(kb, question, 4, 12)
    assert response.metadata["fusion"]["legs"] == list(LEGS)
    # relevance: the fused score against that of a chunk all three legs ranked first
    assert all(r.metadata["relevance_score"] == pytest.approx(r.metadata["fused_score"] / (3 / 61)) for r in response.results)
    assert all(r.score == pytest.approx(r.metadata["relevance_score"]) for r in response.results)


async def test_relevance_separates_the_answer_from_what_only_one_leg_found(kb):
    response = await kb.query("Who discovered penicillin?", mode="memory_search", top_k=8, options=RELEVANCE_ONLY)
    relevance = [r.metadata["relevance_score"] for r in response.results]
    assert response.results[0].metadata["name"].startswith("penicillin")
    assert relevance[0] > 0.9  # every leg ranks the penicillin chunk at or near the top
    assert min(relevance) < 0.4  # a chunk one leg found low and the others not at all is not "0.96 relevant"
    assert relevance == sorted(relevance, reverse=True)


async def test_importance_and_recency_follow_the_documented_formula_on_a_constructed_set(tmp_path):
    # four equally relevant memories (the same words), apart only in importance and last access
    texts = {name: "The red kite nests in tall oak trees near the river." for name in ("a", "b", "c", "d")}
    importance = {"a": 9, "b": 1, "c": 5, "d": 0}
    kb = KnowledgeBase.create(tmp_path / "kb", full_text_recipe(), registry=PluginRegistry.from_entry_points())
    await kb.build([SourceDocument(id=k, name=f"{k}.txt", text=t, metadata={"importance": importance[k]}) for k, t in texts.items()])
    now = time.time()
    log = access_log(kb.path)
    hours_ago = {"a": 200, "b": 0, "c": 50, "d": 10}
    for doc, hours in hours_ago.items():
        log.record([f"{doc}-00000"], now - hours * 3600)

    by_importance = await kb.query("red kite", mode="memory_search", top_k=4,
                                   options={"weight_recency": 0, "weight_importance": 1, "weight_relevance": 0, "update_access": False})
    assert [r.document_id for r in by_importance.results] == ["a", "c", "b", "d"]
    assert [r.metadata["importance_score_normalized"] for r in by_importance.results] == [0.9, 0.5, 0.1, 0.0]

    by_recency = await kb.query("red kite", mode="memory_search", top_k=4,
                                options={"weight_recency": 1, "weight_importance": 0, "weight_relevance": 0,
                                         "recency_decay": 0.99, "update_access": False})
    assert [r.document_id for r in by_recency.results] == ["b", "d", "c", "a"]
    for result in by_recency.results:
        assert result.metadata["recency_score"] == pytest.approx(0.99 ** hours_ago[result.document_id], rel=1e-3)

    mixed = await kb.query("red kite", mode="memory_search", top_k=4,
                           options={"weight_recency": 0.5, "weight_importance": 1.5, "weight_relevance": 1.0, "update_access": False})
    for result in mixed.results:
        m = result.metadata
        expected = (0.5 * m["recency_score"] + 1.5 * m["importance_score_normalized"] + 1.0 * m["relevance_score"]) / 3.0
        assert result.score == pytest.approx(expected)
    assert [r.score for r in mixed.results] == sorted((r.score for r in mixed.results), reverse=True)
    # importance 9 but 200 hours old beats importance 1 accessed now once importance weighs 3x recency
    assert mixed.results[0].document_id == "a"
    kb.close()


async def test_weights_set_in_the_recipe_are_the_defaults_a_request_overrides(tmp_path):
    import attrs

    importance = {"a": 9, "b": 1, "c": 5}
    by_importance = {"weight_recency": 0, "weight_importance": 1, "weight_relevance": 0, "update_access": False}
    recipe = attrs.evolve(full_text_recipe(), query={"memory_search": by_importance})
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=PluginRegistry.from_entry_points())
    try:
        await kb.build([SourceDocument(id=k, name=f"{k}.txt", text="The red kite nests in tall oak trees.",
                                       metadata={"importance": v}) for k, v in importance.items()])
        reloaded = KnowledgeBase.load(kb.path)
        assert reloaded.recipe.query_defaults("memory_search") == by_importance  # saved with the KB
        reloaded.close()
        response = await kb.query("red kite", mode="memory_search", top_k=3)
        assert [r.document_id for r in response.results] == ["a", "c", "b"]
        # a request's own weight replaces the recipe's: importance off, relevance on -> all equal, no importance order
        overridden = await kb.query("red kite", mode="memory_search", top_k=3,
                                    options={"weight_importance": 0, "weight_relevance": 1})
        assert {r.metadata["relevance_score"] for r in overridden.results} == {r.score for r in overridden.results}
    finally:
        kb.close()


async def test_returning_a_memory_updates_its_last_access_unless_switched_off(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb", full_text_recipe(), registry=PluginRegistry.from_entry_points())
    await kb.build([SourceDocument(id="kite", text="The red kite nests in oak trees."),
                    SourceDocument(id="owl", text="The barn owl hunts mice at night.")])
    log = access_log(kb.path)
    await kb.query("red kite", mode="memory_search", top_k=1, options={"update_access": False})
    assert log.last_access(["kite-00000", "owl-00000"]) == {}
    before = time.time()
    first = await kb.query("red kite", mode="memory_search", top_k=1)
    assert [r.id for r in first.results] == ["kite-00000"]
    assert log.last_access(["kite-00000", "owl-00000"]).keys() == {"kite-00000"}  # only what was returned
    assert log.last_access(["kite-00000"])["kite-00000"] >= before
    # the next query sees it as just accessed: recency back to ~1
    second = await kb.query("red kite", mode="memory_search", top_k=1, options={"recency_decay": 0.5})
    assert second.results[0].metadata["recency_score"] == pytest.approx(1.0, abs=1e-3)
    # an older time never overwrites a newer one (two processes recording out of order)
    newest = log.last_access(["kite-00000"])["kite-00000"]
    log.record(["kite-00000"], newest - 3600)
    assert log.last_access(["kite-00000"])["kite-00000"] == newest
    kb.close()


async def test_tags_keep_only_documents_with_one_of_them(kb):
    response = await kb.query("Fleming penicillin whales Python", mode="memory_search", top_k=10,
                              options={"tags": ["animals", "computing"], "update_access": False})
    assert {r.document_id for r in response.results} == {"whales", "python"}


async def test_related_are_graph_neighbours_not_already_in_the_results(kb):
    response = await kb.query("Who discovered penicillin?", mode="memory_search", top_k=1, options=RELEVANCE_ONLY)
    assert [r.document_id for r in response.results] == ["penicillin"]
    related = response.metadata["related"]
    assert related, "Fleming's chunk shares Alexander Fleming, Howard Florey and Ernst Chain with the penicillin chunk"
    assert "fleming-00000" in [r["id"] for r in related]
    assert all(r["id"] not in {x.id for x in response.results} for r in related)
    assert all(r["via_entity"].startswith("entity:") and r["content"] for r in related)
    none = await kb.query("Who discovered penicillin?", mode="memory_search", top_k=1, options={**RELEVANCE_ONLY, "related": False})
    assert none.metadata["related"] == []


async def test_without_a_graph_related_is_empty_and_missing_legs_are_issues(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb", full_text_recipe(), registry=PluginRegistry.from_entry_points())
    await kb.build([SourceDocument(id="kite", text="The red kite nests in oak trees.")])
    assert "memory_search" in kb.available_queries  # one leg is enough
    response = await kb.query("red kite", mode="memory_search", options={"update_access": False})
    assert [r.id for r in response.results] == ["kite-00000"]
    assert response.metadata["fusion"]["legs"] == ["full_text_search"]
    assert response.metadata["related"] == []
    codes = [(i["code"], i.get("details", {}).get("mode")) for i in response.issues]
    assert ("memory_related_unavailable", None) in codes
    assert {("memory_leg_unavailable", "vector_search"), ("memory_leg_unavailable", "heta_graph_search")} <= set(codes)
    kb.close()


async def test_a_knowledge_base_with_no_leg_built_does_not_offer_the_mode(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments()]), registry=PluginRegistry.from_entry_points())
    await kb.build([SourceDocument(id="kite", text="The red kite.")])
    assert "memory_search" not in kb.available_queries
    assert any("chunk_vector_index" in reason for reason in kb.unavailable_queries()["memory_search"])
    kb.close()


@pytest.mark.parametrize("options, field", [
    ({"weight_recency": 0, "weight_importance": 0, "weight_relevance": 0}, "at least one"),
    ({"weight_recency": -1}, "weight_recency"),
    ({"recency_decay": 0}, "recency_decay"),
    ({"recency_decay": 1.5}, "recency_decay"),
    ({"tags": [1]}, "tags"),
    ({"weight_relevence": 1}, "did you mean 'weight_relevance'"),
])
async def test_bad_options_are_invalid_queries(kb, options, field):
    with pytest.raises(InvalidQueryError, match=field):
        await kb.query("penicillin", mode="memory_search", options=options)


async def test_a_reranker_reorders_the_scored_memories(tmp_path):
    from heta_framework.common.models import RerankModel
    from heta_framework.testing.http import ScriptedServer, rerank_body
    from heta_plugin_fulltext import IndexFullText

    with ScriptedServer() as server:
        reranker = RerankModel(model_name="cohere/rerank-english-v3.0", base_url=server.url, api_key="co-test-MEMORY-77aa",
                               options={"max_attempts": 1, "timeout": 5})
        recipe = Recipe(models=KnowledgeModels(reranker=reranker), steps=[ParseDocuments(), SplitDocuments(), IndexFullText()])
        kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=PluginRegistry.from_entry_points())
        await kb.build([SourceDocument(id="kite", text="The red kite nests in oak trees.", metadata={"importance": 9}),
                        SourceDocument(id="owl", text="The red owl hunts mice.", metadata={"importance": 1})])
        plain = await kb.query("red", mode="memory_search", options={"rerank": False, "update_access": False})
        assert [r.document_id for r in plain.results] == ["kite", "owl"] and plain.metadata["ranking"] == "composite"
        server.enqueue("/v2/rerank", body=rerank_body([(1, 0.9), (0, 0.2)]))
        reranked = await kb.query("red", mode="memory_search", options={"update_access": False})
        assert server.requests_to("/v2/rerank")[0].json["documents"] == [r.text for r in plain.results]
        assert [r.document_id for r in reranked.results] == ["owl", "kite"]
        assert reranked.metadata["ranking"] == "reranker"
        assert reranked.results[0].metadata["rerank_score"] == 0.9
        server.enqueue("/v2/rerank", status=500, body={"message": "co-test-MEMORY-77aa broke"})
        failed = await kb.query("red", mode="memory_search", options={"update_access": False})
        assert [r.document_id for r in failed.results] == ["kite", "owl"]
        assert sorted({i["code"] for i in failed.issues}) == ["memory_leg_unavailable", "memory_related_unavailable", "rerank_failed"]
        assert "co-test-MEMORY-77aa" not in str(failed.issues)
        kb.close()
