"""``agent_search`` through the scripted server and the real openai client: the tool loop, its trace and budget, the
grounded synthesis checked against the ledger, and every kind of bad model behaviour ending in an issue, not a crash."""

from __future__ import annotations

import json

from heta_framework.kb import KnowledgeBase
from heta_framework.testing.http import Reply, openai_error_body, tool_messages
from heta_plugin_wiki.testing import PlanModel, shown_results, tool_turns

MODE = "agent_search"


def ask(kb, text="What do blue whales eat?", top_k=10, **options):
    return kb.sync.query(text, mode=MODE, top_k=top_k, options=options)


def codes(response) -> list[str]:
    return [issue["code"] for issue in response.issues]


def first_chunk(request) -> list[tuple[str, dict]]:
    chunk = next(r for r in shown_results(request) if r["kind"] == "chunk")
    return [("read_around", {"chunk_id": chunk["id"], "window": 1})]


def test_unavailable_without_a_language_model_and_the_reason_names_it(built_path, wiki_registry):
    with KnowledgeBase.load(built_path, registry=wiki_registry) as kb:
        assert MODE not in kb.available_queries
        assert any("models.language" in reason for reason in kb.unavailable_queries()[MODE])


def test_the_loop_searches_reads_around_a_hit_and_answers_citing_only_what_the_tools_returned(agent_kb, server):
    model = PlanModel([[("search", {"query": "blue whales krill", "mode": "vector_search"})], first_chunk],
                      answer=lambda request: "Blue whales feed on krill.", extra_citations=["invented-id"])
    server.respond("chat/completions", model)
    response = ask(agent_kb)
    server.check()

    turns = tool_turns(server)
    assert len(turns) == 3  # search, read_around, then the model stops
    offered = {t["function"]["name"]: t["function"] for t in turns[0].json["tools"]}
    assert set(offered) == {"search", "read_document", "read_around", "graph_neighbours"}  # the graph exists here
    modes = offered["search"]["parameters"]["properties"]["mode"]["enum"]
    assert "vector_search" in modes and "heta_graph_search" in modes and MODE not in modes
    assert "heta_multihop_search" not in modes  # modes that need the language model are not tools
    searched = json.loads(tool_messages(turns[1])[0]["content"])["results"]
    assert searched and all(r["id"] for r in searched)

    calls = response.metadata["tool_calls"]
    assert [c["tool"] for c in calls] == ["search", "read_around"]
    assert calls[0]["arguments"] == {"query": "blue whales krill", "mode": "vector_search"}
    assert calls[0]["result_ids"] == [r["id"] for r in searched] and all(c["duration_ms"] >= 0 for c in calls)
    around = calls[1]["result_ids"]
    assert searched[0]["id"] in around if searched[0]["kind"] == "chunk" else around

    ledger = {*calls[0]["result_ids"], *around}
    assert response.answer == "Blue whales feed on krill."
    [insight] = response.metadata["insights"]
    assert "invented-id" not in insight["evidence"] and set(insight["evidence"]) <= ledger
    assert codes(response) == ["agent_citation_not_in_ledger"]
    assert response.issues[0]["details"]["ids"] == ["invented-id"]
    assert [c.result_id for c in response.citations] == insight["evidence"]
    assert {r.id for r in response.results} <= ledger and len(response.results) == min(10, len(ledger))
    assert [r.score for r in response.results] == sorted((r.score for r in response.results), reverse=True)
    assert response.metadata["usage"]["model_calls"] == 4 and response.metadata["stopped"] == "answered"


def test_read_document_returns_its_chunks_and_a_missing_one_is_refused_to_the_model(agent_kb, server):
    server.respond("chat/completions", PlanModel([[("read_document", {"document_id": "ocean"}),
                                                   ("read_document", {"document_id": "no-such-doc"})]]))
    response = ask(agent_kb)
    calls = response.metadata["tool_calls"]
    assert calls[0]["result_ids"] and all(i.startswith("ocean") for i in calls[0]["result_ids"])
    assert calls[1]["error"] == "no readable document 'no-such-doc'" and calls[1]["result_ids"] == []
    replies = tool_messages(tool_turns(server)[1])
    assert json.loads(replies[1]["content"]) == {"error": "no readable document 'no-such-doc'"}
    assert {r.document_id for r in response.results} == {"ocean"}


def test_graph_neighbours_follows_an_entity_found_by_the_graph_search(agent_kb, server):
    def follow(request):
        entity = next(r for r in shown_results(request) if r["kind"] == "entity")
        return [("graph_neighbours", {"entity_id": entity["id"]})]

    server.respond("chat/completions", PlanModel([[("search", {"query": "Pacific Ocean", "mode": "heta_graph_search"})], follow]))
    response = ask(agent_kb)
    neighbours = response.metadata["tool_calls"][1]
    assert neighbours["tool"] == "graph_neighbours" and "error" not in neighbours
    assert neighbours["result_ids"] and all(i.startswith("relation:") for i in neighbours["result_ids"])


def test_bad_calls_each_become_an_issue_and_the_good_one_still_counts(agent_kb, server):
    server.respond("chat/completions", PlanModel([[
        ("fly_to_moon", {}),
        ("search", "{not json"),
        ("search", {"query": "whales"}),
        ("search", {"query": "whales", "mode": "no_such_mode"}),
        ("search", {"query": "whales", "mode": "vector_search"}),
    ]]))
    response = ask(agent_kb)
    assert codes(response) == ["agent_unknown_tool", "agent_malformed_arguments", "agent_malformed_arguments",
                               "agent_malformed_arguments"]
    errors = [json.loads(m["content"]).get("error") for m in tool_messages(tool_turns(server)[1])]
    assert errors[0].startswith("there is no tool 'fly_to_moon'") and errors[1] == "the arguments are not valid JSON"
    assert errors[2] == "missing argument(s): mode" and errors[3].startswith("mode must be one of")
    assert errors[4] is None  # the valid call ran
    assert response.results and response.answer == "The answer."


def test_a_repeated_call_is_not_run_again_and_repeating_ends_the_loop(agent_kb, server):
    same = [("search", {"query": "whales", "mode": "vector_search"})]
    server.respond("chat/completions", PlanModel([same, same, same, same]))
    response = ask(agent_kb)
    assert [c["tool"] for c in response.metadata["tool_calls"] if "error" not in c] == ["search"]  # run once
    assert codes(response).count("agent_repeated_call") == 3  # two refusals, then the loop stops
    assert response.metadata["stopped"] == "repeated_calls" and len(tool_turns(server)) == 3
    assert response.results  # what the one run found is still the evidence


def test_calls_over_max_tool_calls_are_refused(agent_kb, server):
    server.respond("chat/completions", PlanModel([[("search", {"query": "whales", "mode": "vector_search"}),
                                                   ("search", {"query": "rivers", "mode": "vector_search"})]]))
    response = ask(agent_kb, max_tool_calls=1)
    assert codes(response) == ["agent_over_budget"]
    assert [c.get("error") is None for c in response.metadata["tool_calls"]] == [True, False]


def test_max_steps_ends_the_loop_and_the_answer_rests_on_what_was_found(agent_kb, server):
    plan = [[("search", {"query": f"ocean {n}", "mode": "vector_search"})] for n in range(10)]
    server.respond("chat/completions", PlanModel(plan))
    response = ask(agent_kb, max_steps=2)
    assert codes(response) == ["agent_budget_exhausted"] and response.issues[0]["details"]["limit"] == "max_steps"
    assert len(tool_turns(server)) == 2 and response.metadata["stopped"] == "max_steps"
    assert response.results and response.answer == "The answer."


def test_max_tokens_stops_before_the_next_turn(agent_kb, server):
    server.respond("chat/completions", PlanModel([[("search", {"query": f"ocean {n}", "mode": "vector_search"})] for n in range(5)]))
    response = ask(agent_kb, max_tokens=20)  # each scripted turn reports 15 tokens
    assert response.issues[0]["details"]["limit"] == "max_tokens" and len(tool_turns(server)) == 2


def test_wall_time_stops_a_slow_model(agent_kb, server):
    plan = PlanModel([[("search", {"query": "ocean", "mode": "vector_search"})]])

    def slow(request):
        reply = plan(request)
        return Reply(body=reply.body, delay=0.0 if plan.turn <= 1 or "tools" not in request.json else 2.0)

    server.respond("chat/completions", slow)
    response = ask(agent_kb, wall_time=0.5)
    assert response.issues[0]["code"] == "agent_budget_exhausted" and response.issues[0]["details"]["limit"] == "wall_time"
    assert response.results  # the first turn's search is kept


def test_a_failed_model_call_keeps_the_evidence_already_found(agent_kb, server):
    plan = PlanModel([[("search", {"query": "ocean", "mode": "vector_search"})]])
    replies = iter([None, Reply(status=500, body=openai_error_body("boom sk-test", type="server_error"))])

    def flaky(request):
        if "tools" in request.json:
            failure = next(replies, None)
            if failure is not None:
                return failure
        return plan(request)

    server.respond("chat/completions", flaky)
    response = ask(agent_kb)
    assert codes(response) == ["agent_model_failed"] and response.metadata["stopped"] == "model_failed"
    assert "sk-test" not in json.dumps(response.to_dict())
    assert response.results and response.answer == "The answer."


def test_an_unusable_synthesis_is_reported_and_the_evidence_returned(agent_kb, server):
    plan = PlanModel([[("search", {"query": "ocean", "mode": "vector_search"})]])
    server.respond("chat/completions", lambda r: plan(r) if "tools" in r.json else {"choices": [
        {"index": 0, "message": {"role": "assistant", "content": "no json here"}, "finish_reason": "stop"}]})
    response = ask(agent_kb)
    assert codes(response) == ["agent_no_answer"] and response.results
    assert response.answer == "The evidence found does not answer the question." and response.citations == ()


def test_nothing_found_makes_no_synthesis_call(agent_kb, server):
    server.respond("chat/completions", PlanModel([]))
    response = ask(agent_kb)
    assert codes(response) == ["agent_no_evidence"] and response.results == ()
    assert len(server.requests) == 1


def test_a_filter_reaches_every_tool(agent_kb, server):
    server.respond("chat/completions", PlanModel([[("search", {"query": "ocean", "mode": "vector_search"}),
                                                   ("read_document", {"document_id": "ocean"})]]))
    response = agent_kb.sync.query("ocean", mode=MODE, filters={"document_id": "rivers"})
    assert response.results and {r.document_id for r in response.results} == {"rivers"}
    assert response.metadata["tool_calls"][1]["error"] == "no readable document 'ocean'"




def test_with_stream_every_tool_turn_is_read_as_a_stream_and_the_loop_runs_the_same(agent_kb, server):
    from heta_framework.testing.http import chat_stream_tool_calls_reply

    plan = PlanModel([[("search", {"query": "blue whales krill", "mode": "vector_search"})]])

    def streamed(request):
        reply = plan(request)
        if "tools" not in request.json:
            return reply
        message = reply.body["choices"][0]["message"]
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls") or []]
        if not calls:  # the model stops: a streamed closing note with no calls
            return chat_stream_tool_calls_reply([], text=message["content"])
        return chat_stream_tool_calls_reply(calls, id_prefix=f"call_{plan.turn}_")

    server.respond("chat/completions", streamed)
    response = ask(agent_kb, stream=True)
    turns = tool_turns(server)
    assert len(turns) == 2 and all(t.json["stream"] is True for t in turns)
    assert [c["tool"] for c in response.metadata["tool_calls"]] == ["search"] and response.metadata["tool_calls"][0]["result_ids"]
    assert response.metadata["stopped"] == "answered" and response.issues == [] and response.results
