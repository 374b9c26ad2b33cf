"""Community reports and global search's answer through the real openai client against the scripted server.

Every path (valid, invalid then valid, always invalid, 429, time-out), with call counts: one call per community
per level; none on a rebuild, a repeat build or a deletion; after adding a document only for the communities it touched.
"""

from __future__ import annotations

import json

from heta_framework.kb import SourceDocument
from heta_framework.testing.http import Reply, chat_completion_body

ROUTE = "chat/completions"
REPORT = {
    "title": "Scripted community", "summary": "A community the scripted model described.",
    "findings": [{"summary": "It exists", "explanation": "The scripted model says so."}],
    "rating": 6.5, "rating_explanation": "Scripted.",
}
CURIE = SourceDocument(id="curie", name="curie.txt", text="Marie Curie discovered polonium in Paris. Marie Curie taught at the Sorbonne.")


def is_report_request(request) -> bool:
    system = (request.json or {}).get("messages", [{}])[0].get("content", "")
    return "community of entities" in system


def report_requests(server) -> list:
    return [r for r in server.requests_to(ROUTE) if is_report_request(r)]


def answer(value) -> dict:
    return chat_completion_body(value if isinstance(value, str) else json.dumps(value))


def scripted(report=REPORT, reply: str = "The scripted answer [1]."):
    def respond(request):
        return answer(report) if is_report_request(request) else answer(reply)
    return respond


def reports_of(kb) -> dict:
    return kb.get_component("stores.objects").get_json("graphrag/reports.json")["reports"]


def step_stats(report, name="community_reports") -> dict:
    return next(s.stats for s in report.steps if s.name == name)


def codes(report) -> list[str]:
    return sorted({issue.code for issue in report.issues})


async def test_one_call_per_community_then_none_on_rebuild_and_only_touched_ones_after_an_add(unbuilt_llm_kb, documents, server):
    server.respond(ROUTE, scripted())
    kb = unbuilt_llm_kb()
    first = await kb.build(documents)
    assert first.issues == []
    reports = reports_of(kb)
    assert len(report_requests(server)) == len(reports) > 0  # exactly one call per community (every level)
    assert all(e["source"] == "language_model" and e["report"]["title"] == "Scripted community" for e in reports.values())
    assert "Entities:" in report_requests(server)[0].json["messages"][1]["content"]  # the community's material was sent

    await kb.build(documents)
    await kb.build(documents, rebuild=True)
    assert len(report_requests(server)) == len(reports)  # 0 calls on a repeat build and on a rebuild

    added = await kb.build([CURIE])
    touched = step_stats(added)["communities_reported"]
    assert 0 < touched < len(reports_of(kb))
    assert len(report_requests(server)) == len(reports) + touched  # only the communities the document touched

    before = len(report_requests(server))
    await kb.delete_documents(["space", "curie"])
    assert len(report_requests(server)) == before  # deletion never calls the model
    assert not any("curie-00000" in e["chunk_ids"] for e in reports_of(kb).values())


async def test_global_search_answers_with_the_model(llm_kb, server):
    server.respond(ROUTE, scripted())
    kb = await llm_kb()
    response = await kb.query("What are the main themes?", mode="graphrag_global_search", top_k=3)
    assert response.metadata["answer"] == "The scripted answer [1]."
    assert "issues" not in response.metadata and response.results
    asked = [r for r in server.requests_to(ROUTE) if not is_report_request(r)]
    assert len(asked) == 1 and "What are the main themes?" in asked[0].json["messages"][1]["content"]
    assert "Scripted community" in asked[0].json["messages"][1]["content"]  # the kept reports are the context


async def test_invalid_then_valid_retries_with_the_error(llm_kb, server):
    state = {"bad": 0}

    def respond(request):
        if is_report_request(request) and len(request.json["messages"]) == 2 and state["bad"] == 0:
            state["bad"] += 1
            return answer("here is your report: it is great")
        return scripted()(request)

    server.respond(ROUTE, respond)
    kb = await llm_kb()
    reports = reports_of(kb)
    assert len(report_requests(server)) == len(reports) + 1  # one community needed a second try
    retried = [r for r in report_requests(server) if len(r.json["messages"]) == 4]
    assert len(retried) == 1 and "invalid" in retried[0].json["messages"][3]["content"]
    assert all(e["source"] == "language_model" for e in reports.values())


async def test_always_invalid_gives_a_coded_issue_an_extractive_report_and_no_new_call(unbuilt_llm_kb, documents, server):
    server.respond(ROUTE, scripted(report={**REPORT, "rating": "very high"}))
    kb = unbuilt_llm_kb()
    report = await kb.build(documents)
    reports = reports_of(kb)
    assert codes(report) == ["graphrag_report_invalid"]
    assert len(report_requests(server)) == 3 * len(reports)  # max_attempts tries each
    assert all(e["source"] == "extractive_fallback" and e["report"]["title"] != "Scripted community" for e in reports.values())
    await kb.build(documents, rebuild=True)
    assert len(report_requests(server)) == 3 * len(reports)  # the invalid answer is cached: no new call


async def test_rate_limited_falls_back_and_the_next_build_asks_again(unbuilt_llm_kb, documents, server):
    server.respond(ROUTE, lambda request: Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0"}))
    kb = unbuilt_llm_kb(max_attempts=1)
    report = await kb.build(documents)
    reports = reports_of(kb)
    assert codes(report) == ["graphrag_report_failed"]
    assert all(e["source"] == "extractive" for e in reports.values())
    assert "sk-test" not in json.dumps([issue.message for issue in report.issues])
    assert "graphrag_global_search" in kb.available_queries  # the modes exist with extractive reports
    server.reset()
    server.respond(ROUTE, scripted())
    await kb.build(documents, rebuild=True)
    assert len(report_requests(server)) == len(reports)  # a failed call is not cached: asked again, once each
    assert all(e["source"] == "language_model" for e in reports_of(kb).values())


async def test_time_out_falls_back_with_a_code(unbuilt_llm_kb, documents, server):
    server.respond(ROUTE, lambda request: Reply(body=answer(REPORT), delay=3.0))
    kb = unbuilt_llm_kb(max_attempts=1, timeout=0.3)
    report = await kb.build(documents)
    assert codes(report) == ["graphrag_report_failed"]
    assert all(e["source"] == "extractive" for e in reports_of(kb).values())


async def test_global_search_answer_failure_is_an_issue(llm_kb, server):
    server.respond(ROUTE, scripted())
    kb = await llm_kb(max_attempts=1)
    server.reset()
    server.respond(ROUTE, lambda request: Reply(status=500, body={"error": {"message": "down"}}))
    response = await kb.query("What are the main themes?", mode="graphrag_global_search", top_k=3)
    assert [i["code"] for i in response.metadata["issues"]] == ["graphrag_answer_failed"]
    assert response.results and "answer" not in response.metadata


async def test_report_calls_are_bounded_by_concurrency(unbuilt_llm_kb, documents, server):
    server.respond(ROUTE, lambda request: Reply(body=answer(REPORT), delay=0.2))
    kb = unbuilt_llm_kb(report_options={"concurrency": 2})
    report = await kb.build(documents)
    assert report.issues == [] and len(report_requests(server)) == len(reports_of(kb)) > 2
    assert server.max_in_flight == 2  # calls overlap, never more than the bound


async def test_use_language_model_false_writes_extractive_reports_without_calls(unbuilt_llm_kb, documents, server):
    server.respond(ROUTE, scripted())
    kb = unbuilt_llm_kb(report_options={"use_language_model": False})
    await kb.build(documents)
    assert report_requests(server) == []
    assert all(e["source"] == "extractive" for e in reports_of(kb).values())


async def test_answers_are_cached_by_community_content_so_a_lost_report_file_costs_no_call(unbuilt_llm_kb, documents, server):
    # what an interrupted build leaves: answers cached, reports.json not yet written
    server.respond(ROUTE, scripted())
    kb = unbuilt_llm_kb()
    await kb.build(documents)
    calls = len(report_requests(server))
    kb.get_component("stores.objects").delete("graphrag/reports.json")
    report = await kb.build(documents, rebuild=True)
    assert len(report_requests(server)) == calls
    assert step_stats(report)["communities_reported"] == calls  # every report was made again, from the cache
    assert all(e["source"] == "language_model" for e in reports_of(kb).values())
