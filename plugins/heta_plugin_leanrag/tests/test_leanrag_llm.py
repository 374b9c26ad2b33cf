"""Aggregates and relations between them by the language model: the real openai client against the scripted server.

Every path (valid, invalid then valid, always invalid, 429, time-out), with call counts: one call per aggregate
and per relation asked; none on a rebuild, a repeat or a deletion, nor when the stored hierarchy is lost (the
answers are cached by content); after adding a document only for what it changed. A bad answer is a coded
StepIssue, the aggregate is extractive, and the build goes on.
"""

from __future__ import annotations

import json

from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.testing.http import Reply
from heta_plugin_graph.steps import BuildGraph, DeduplicateEntities, DeduplicateRelations, ExtractEntities, ExtractRelations
from heta_plugin_graph.testing import DOCUMENTS, CapitalisedExtractor, scripted_language_models
from heta_plugin_leanrag import SemanticAggregation
from heta_plugin_leanrag.testing import (
    MODE,
    AggregationModel,
    answer,
    hierarchy_of,
    is_aggregate_request,
    is_relation_request,
    requests_of,
    step_stats,
)

CURIE = SourceDocument(id="curie", name="curie.txt", text="Marie Curie discovered polonium in Paris. Marie Curie taught at the Sorbonne.")


def codes(report) -> list[str]:
    return sorted({issue.code for issue in report.issues})


def origins(kb) -> set[str]:
    stored = hierarchy_of(kb)
    return {r["origin"] for r in stored["aggregates"].values()}


def count(server) -> tuple[int, int]:
    return len(requests_of(server, is_aggregate_request)), len(requests_of(server, is_relation_request))


def test_one_call_each_then_none_on_a_rebuild_and_only_what_an_added_document_changed(kb_copy, server):
    server.respond("chat/completions", AggregationModel())
    kb = kb_copy(scripted_language_models(server))
    first = kb.sync.build(rebuild=True)
    stored = hierarchy_of(kb)
    assert first.issues == [] and stored["relations"]
    assert count(server) == (len(stored["aggregates"]), len(stored["relations"]))  # every aggregate and relation once
    assert origins(kb) == {"language_model"} and {r["origin"] for r in stored["relations"].values()} == {"language_model"}
    root = next(r for r in stored["aggregates"].values() if r["parent"] is None)
    assert root["name"].endswith(" group group")  # level 2 was asked about level 1's model-given names
    asked = requests_of(server, is_aggregate_request)[0].json["messages"][1]["content"]
    assert "Entities:" in asked and "Relations:" in asked

    kb.sync.build(rebuild=True)
    kb.sync.build(list(DOCUMENTS))
    assert count(server) == (len(stored["aggregates"]), len(stored["relations"]))  # 0 calls on a rebuild and a repeat

    before = count(server)
    added = step_stats(kb.sync.build([CURIE]))
    after = count(server)
    assert after[0] - before[0] == added["aggregates_made"] and 0 < added["aggregates_made"] < len(hierarchy_of(kb)["aggregates"])
    assert after[1] - before[1] == added.get("relations_made", 0)

    kb.sync.delete_documents(["curie"])
    assert count(server) == after  # removal never calls the model
    assert "extractive" in origins(kb)  # what the removal changed is extractive until the next build
    response = kb.sync.query("Marie Curie", mode=MODE, top_k=20)
    assert any(r.kind == "aggregate" and r.metadata["origin"] == "language_model" for r in response.results)


def test_a_lost_hierarchy_is_rebuilt_from_the_cache_without_a_call(kb_copy, server):
    server.respond("chat/completions", AggregationModel())
    kb = kb_copy(scripted_language_models(server))
    kb.sync.build(rebuild=True)
    calls, stored = count(server), hierarchy_of(kb)
    kb.get_component("stores.objects").delete("leanrag/hierarchy.json")  # what an interrupted build can leave
    report = kb.sync.build(rebuild=True)
    assert count(server) == calls and step_stats(report)["aggregates_made"] == len(stored["aggregates"])
    assert hierarchy_of(kb)["aggregates"].keys() == stored["aggregates"].keys() and origins(kb) == {"language_model"}


def test_invalid_then_valid_retries_with_the_error(kb_copy, server):
    state = {"refused": 0}

    def respond(request):
        if is_aggregate_request(request) and len(request.json["messages"]) == 2 and not state["refused"]:
            state["refused"] += 1  # the name of one member is not a name for the whole set
            member = request.json["messages"][1]["content"].split("Entities:\n- ", 1)[1].split(":", 1)[0]
            return Reply(body=answer({"name": member, "description": "One of them.", "findings": []}))
        return AggregationModel()(request)

    server.respond("chat/completions", respond)
    kb = kb_copy(scripted_language_models(server))
    report = kb.sync.build(rebuild=True)
    stored = hierarchy_of(kb)
    assert report.issues == [] and origins(kb) == {"language_model"}
    assert count(server)[0] == len(stored["aggregates"]) + 1
    retried = [r for r in requests_of(server, is_aggregate_request) if len(r.json["messages"]) == 4]
    assert len(retried) == 1 and "name the whole set" in retried[0].json["messages"][3]["content"]


def test_always_invalid_is_a_coded_issue_an_extractive_aggregate_and_no_new_call(kb_copy, server):
    def respond(request):
        if is_aggregate_request(request):
            return Reply(body=answer({"name": "Some group", "description": "A group.", "findings": "none"}))
        return AggregationModel()(request)

    server.respond("chat/completions", respond)
    kb = kb_copy(scripted_language_models(server))
    report = kb.sync.build(rebuild=True)
    stored = hierarchy_of(kb)
    assert codes(report) == ["leanrag_summary_invalid"] and len(report.issues) == len(stored["aggregates"])
    assert report.issues[0].subject.type == "aggregate" and str(report.issues[0].details["attempt_count"]) == "3"
    assert count(server)[0] == 3 * len(stored["aggregates"])  # max_attempts tries each
    assert origins(kb) == {"extractive_fallback"} and MODE in kb.available_queries
    kb.sync.build(rebuild=True)
    assert count(server)[0] == 3 * len(stored["aggregates"])  # the invalid answers are cached: no new call


def test_an_invalid_relation_description_is_its_own_issue(kb_copy, server):
    def respond(request):
        if is_relation_request(request):
            return Reply(body=answer({"description": "  "}))
        return AggregationModel()(request)

    server.respond("chat/completions", respond)
    kb = kb_copy(scripted_language_models(server))
    report = kb.sync.build(rebuild=True)
    stored = hierarchy_of(kb)
    assert codes(report) == ["leanrag_relation_invalid"] and origins(kb) == {"language_model"}
    assert {r["origin"] for r in stored["relations"].values()} == {"extractive_fallback"}
    assert all(r["description"].strip() for r in stored["relations"].values())


def test_rate_limited_falls_back_and_the_next_build_asks_again(kb_copy, server):
    server.respond("chat/completions", lambda request: Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0"}))
    kb = kb_copy(scripted_language_models(server, max_attempts=1))
    report = kb.sync.build(rebuild=True)
    stored = hierarchy_of(kb)
    assert codes(report) == ["leanrag_relation_failed", "leanrag_summary_failed"]
    assert origins(kb) == {"extractive"} and MODE in kb.available_queries
    assert "sk-test" not in json.dumps([issue.message for issue in report.issues])
    server.reset()
    server.respond("chat/completions", AggregationModel())
    kb.sync.build(rebuild=True)
    assert count(server) == (len(stored["aggregates"]), len(stored["relations"]))  # a failed call is not cached: asked again
    assert origins(kb) == {"language_model"}


def test_a_time_out_falls_back_with_a_code(kb_copy, server):
    def respond(request):  # aggregates answer too late; the graph caller retries a time-out 4 times, so one level only
        return Reply(body=AggregationModel()(request).body, delay=1.0 if is_aggregate_request(request) else 0.0)

    server.respond("chat/completions", respond)
    kb = kb_copy(scripted_language_models(server, max_attempts=1), timeout=0.2, max_levels=1)
    report = kb.sync.build(rebuild=True)
    assert codes(report) == ["leanrag_summary_failed"] and origins(kb) == {"extractive"}
    assert {r["level"] for r in hierarchy_of(kb)["aggregates"].values()} == {1}


def test_calls_are_bounded_by_concurrency_and_can_be_turned_off(kb_copy, server):
    server.respond("chat/completions", lambda request: Reply(body=AggregationModel()(request).body, delay=0.2))
    kb = kb_copy(scripted_language_models(server), concurrency=2)
    assert kb.sync.build(rebuild=True).issues == []
    assert server.max_in_flight == 2 and count(server)[0] > 2
    calls = count(server)
    off = kb_copy(scripted_language_models(server), use_language_model=False)
    off.sync.build(rebuild=True)
    assert count(server) == calls and origins(off) == {"extractive"}


def test_a_graph_extracted_by_the_model_is_aggregated_by_it(tmp_path, leanrag_registry, server):
    extractor, aggregator = CapitalisedExtractor(), AggregationModel()
    server.respond("chat/completions", lambda r: aggregator(r) if is_aggregate_request(r) or is_relation_request(r) else extractor(r))
    steps = [ParseDocuments(), SplitDocuments(chunk_size=60, chunk_overlap=0), PersistChunks(), ExtractEntities(), ExtractRelations(),
             DeduplicateEntities(semantic=False), DeduplicateRelations(), BuildGraph(), SemanticAggregation(cluster_size=4)]
    with KnowledgeBase.create(tmp_path / "kb", Recipe(models=scripted_language_models(server), steps=steps), registry=leanrag_registry) as kb:
        report = kb.sync.build(list(DOCUMENTS[:3]))
        assert report.issues == [] and origins(kb) == {"language_model"}
        response = kb.sync.query("Albert Einstein", mode=MODE, top_k=5)
        assert response.results and response.results[0].metadata["name"] in ("Albert", "Albert group", "Einstein", "Einstein group")
        assert {e.document_id for r in response.results for e in r.evidence} >= {"space"}
