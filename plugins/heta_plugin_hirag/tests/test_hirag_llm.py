"""Summaries, reports and the modes' answer through the real openai client against the scripted server.

Every path (valid, invalid then valid, always invalid, 429, time-out), with call counts: one summary call per
cluster of two or more and one report call per community; none on a rebuild or a deletion; after adding a
document only for the clusters and communities it changed.
"""

from __future__ import annotations

import json

import pytest
from heta_framework.kb import KnowledgeBase
from heta_framework.testing.http import Reply
from heta_plugin_graph.testing import DOCUMENTS, scripted_language_models
from heta_plugin_hirag.hierarchy import Hierarchy
from heta_plugin_hirag.testing import (
    CURIE,
    REPORT,
    ROUTE,
    ScriptedHiRagModel,
    calls,
    completion,
    first_member,
    hirag_recipe,
    rate_limited,
    step_stats,
    stored,
    summary_answer,
)


@pytest.fixture
def make_kb(tmp_path, hirag_registry, server):
    """A factory: a new knowledge base whose recipe has the scripted language model (``**options``: the client's)."""

    def make(aggregation: dict | None = None, **options) -> KnowledgeBase:
        recipe = hirag_recipe(scripted_language_models(server, **options), aggregation=aggregation)
        return KnowledgeBase.create(tmp_path / "kb", recipe, registry=hirag_registry)

    return make


def summaries_of(kb):
    return Hierarchy.from_json(stored(kb, "hierarchy")).summaries()


def reports_of(kb):
    return stored(kb, "reports")["reports"]


def codes(report) -> list[str]:
    return sorted({issue.code for issue in report.issues})


def naming_a_member(request):
    """An invalid summary: it names one of the cluster's own members."""
    return {"name": first_member(request), "type": "concept", "description": "Not a new entity."}


async def test_one_call_per_cluster_and_community_none_on_rebuild_or_deletion_and_only_touched_ones_after_an_add(make_kb, server):
    server.respond(ROUTE, ScriptedHiRagModel())
    kb = make_kb()
    first = await kb.build(list(DOCUMENTS))
    assert first.issues == []
    summaries, reports = summaries_of(kb), reports_of(kb)
    assert len(calls(server, "summary")) == len(summaries) > 0 and len(calls(server, "report")) == len(reports) > 0
    assert all(s.source == "language_model" and s.name.startswith("Theme of ") for s in summaries.values())
    assert all(e["source"] == "language_model" and e["report"]["title"] == "Scripted community" for e in reports.values())
    assert any(s.layer == 2 and s.name.startswith("Theme of Theme of ") for s in summaries.values())  # summaries of summaries
    assert "Entities:\n- " in calls(server, "summary")[0].json["messages"][1]["content"]  # the members were shown

    await kb.build(list(DOCUMENTS), rebuild=True)
    assert len(calls(server, "summary")) == len(summaries) and len(calls(server, "report")) == len(reports)  # no call again

    added = await kb.build([CURIE])
    written = step_stats(added, "hirag_hierarchical_aggregation")["summaries_written"]
    reported = step_stats(added, "hirag_community")["communities_reported"]
    assert 0 < written < len(summaries_of(kb)) and 0 < reported < len(reports_of(kb))
    assert len(calls(server, "summary")) == len(summaries) + written  # only the clusters the document touched
    assert len(calls(server, "report")) == len(reports) + reported

    before = len(server.requests_to(ROUTE))
    await kb.delete_documents(["space", "curie"])
    assert len(server.requests_to(ROUTE)) == before  # deletion never calls the model
    assert not any({"space", "curie"} & s.document_ids for s in summaries_of(kb).values())
    kb.close()


async def test_invalid_then_valid_retries_with_the_error(make_kb, server):
    state = {"bad": 0}

    def summary(request):
        if len(request.json["messages"]) == 2 and state["bad"] == 0:  # the first question, once
            state["bad"] += 1
            return naming_a_member(request)
        return summary_answer(request)

    server.respond(ROUTE, ScriptedHiRagModel(summary=summary))
    kb = make_kb()
    report = await kb.build(list(DOCUMENTS))
    assert report.issues == []
    assert len(calls(server, "summary")) == len(summaries_of(kb)) + 1  # one cluster needed a second try
    retried = [r for r in calls(server, "summary") if len(r.json["messages"]) == 4]
    assert len(retried) == 1 and "not one of the given entities" in retried[0].json["messages"][3]["content"]
    assert all(s.source == "language_model" for s in summaries_of(kb).values())
    kb.close()


async def test_always_invalid_gives_a_coded_issue_an_extractive_summary_and_no_new_call(make_kb, server):
    server.respond(ROUTE, ScriptedHiRagModel(summary=naming_a_member, report=lambda request: {**REPORT, "rating": "very high"}))
    kb = make_kb()
    report = await kb.build(list(DOCUMENTS))
    summaries, reports = summaries_of(kb), reports_of(kb)
    assert codes(report) == ["hirag_report_invalid", "hirag_summary_invalid"]
    issue = next(i for i in report.issues if i.code == "hirag_summary_invalid")
    assert issue.subject.type == "cluster" and str(issue.details["attempt_count"]) == "3"
    assert len(calls(server, "summary")) == 3 * len(summaries) and len(calls(server, "report")) == 3 * len(reports)  # max_attempts each
    assert all(s.source == "extractive_fallback" for s in summaries.values())
    assert all(e["source"] == "extractive_fallback" for e in reports.values())
    await kb.build(list(DOCUMENTS), rebuild=True)
    assert len(calls(server, "summary")) == 3 * len(summaries)  # the invalid answers are cached: no new call
    kb.close()


async def test_rate_limited_falls_back_and_the_next_build_asks_again(make_kb, server):
    server.respond(ROUTE, rate_limited)
    kb = make_kb(max_attempts=1)
    report = await kb.build(list(DOCUMENTS))
    assert codes(report) == ["hirag_report_failed", "hirag_summary_failed"]
    assert "sk-test" not in json.dumps([issue.message for issue in report.issues])
    assert all(s.source == "extractive" for s in summaries_of(kb).values())
    assert {"hi_rag_query", "hi_rag_global_query"} <= set(kb.available_queries)  # the modes work on extractive output
    server.reset()
    server.respond(ROUTE, ScriptedHiRagModel())
    again = await kb.build(list(DOCUMENTS), rebuild=True)
    assert again.issues == [] and all(s.source == "language_model" for s in summaries_of(kb).values())
    assert len(calls(server, "summary")) == len(summaries_of(kb))  # a failed call is not cached: asked again, once each
    kb.close()


async def test_a_time_out_falls_back_with_a_code(make_kb, server):
    server.respond(ROUTE, lambda request: Reply(body=completion(REPORT), delay=1.0))
    kb = make_kb(max_attempts=1, timeout=0.2)
    report = await kb.build(list(DOCUMENTS))
    assert codes(report) == ["hirag_report_failed", "hirag_summary_failed"]
    assert all(s.source == "extractive" for s in summaries_of(kb).values())
    kb.close()


async def test_the_modes_answer_with_the_model_and_say_when_it_fails(make_kb, server):
    server.respond(ROUTE, ScriptedHiRagModel())
    kb = make_kb(max_attempts=1)
    await kb.build(list(DOCUMENTS))
    response = await kb.query("Which prize did Marie Curie win?", mode="hi_rag_query", top_k=3)
    assert response.metadata["answer"] == "The scripted answer." and "issues" not in response.metadata and response.results
    asked = calls(server, "answer")
    assert len(asked) == 1 and asked[0].json["messages"][1]["content"] == "Which prize did Marie Curie win?"
    assert "-----Reasoning Path-----" in asked[0].json["messages"][0]["content"]  # HiRAG's context is the prompt
    quiet = await kb.query("Which prize did Marie Curie win?", mode="hi_rag_local_query", options={"llm_answer": False})
    assert "answer" not in quiet.metadata and len(calls(server, "answer")) == 1
    server.reset()
    server.respond(ROUTE, lambda request: Reply(status=500, body={"error": {"message": "down"}}))
    failed = await kb.query("Which prize did Marie Curie win?", mode="hi_rag_global_query", top_k=3)
    assert [i["code"] for i in failed.metadata["issues"]] == ["hirag_answer_failed"]
    assert failed.results and "answer" not in failed.metadata
    kb.close()


async def test_use_language_model_false_summarises_without_calls(make_kb, server):
    server.respond(ROUTE, ScriptedHiRagModel())
    kb = make_kb(aggregation={"use_language_model": False})
    await kb.build(list(DOCUMENTS))
    assert calls(server, "summary") == [] and calls(server, "report")  # the community step still asks
    assert all(s.source == "extractive" for s in summaries_of(kb).values())
    kb.close()
