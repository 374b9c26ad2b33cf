"""``POST /api/v1/query`` with ``"stream": true``: results, the answer's tokens as the scripted model streams them,
then a done or error event; a client that leaves stops the model's stream; callers see only what they may read."""

from __future__ import annotations

import json

import httpx
from heta_framework.testing.http import chat_completion_body, chat_stream_reply, last_user_message

QUESTION = "Who discovered penicillin?"


def events(response: httpx.Response) -> list[tuple[str, dict]]:
    """The (event, data) pairs of an SSE response, read to its end."""
    found, name = [], None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            found.append((name, json.loads(line.removeprefix("data: "))))
            name = None
    return found


def stream_query(running, headers: dict, **body) -> list[tuple[str, dict]]:
    with running.client() as client, client.stream("POST", "/api/v1/query", json={"text": QUESTION, "stream": True, **body},
                                                   headers=headers) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return events(response)


def test_results_then_tokens_then_done_with_citations_and_usage(assistant_served, scripted_model):
    running, headers, _ = assistant_served
    scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander Fleming ", "discovered it ", "in 1928 [1]."], prompt_tokens=77))

    found = stream_query(running, headers["outsider"], answer=True, top_k=3)

    kinds = [kind for kind, _ in found]
    assert kinds == ["results", "token", "token", "token", "done"]
    results = found[0][1]
    assert results["results"] and results["results"][0]["metadata"]["document_id"] == "penicillin"
    assert "answer" not in results and results["metadata"]["mode"] == "full_text_search"
    assert [data["text"] for kind, data in found if kind == "token"] == ["Alexander Fleming ", "discovered it ", "in 1928 [1]."]
    done = found[-1][1]
    assert done["answer"] == "Alexander Fleming discovered it in 1928 [1]."
    assert [c["marker"] for c in done["citations"]] == ["[1]"] and done["citations"][0]["result_id"] == results["results"][0]["id"]
    assert (done["usage"]["prompt_tokens"], done["usage"]["completion_tokens"]) == (77, 3)
    assert done["usage"]["total_ms"] >= done["usage"]["retrieval_ms"] > 0
    assert done["issues"] == [] and done["mode"] == "full_text_search"
    (request,) = scripted_model.requests
    assert request.json["stream"] is True
    assert "Alexander Fleming discovered penicillin" in last_user_message(request)  # the evidence, numbered
    scripted_model.check()


def test_without_answer_the_stream_is_results_then_done_and_no_model_call(assistant_served, scripted_model):
    running, headers, _ = assistant_served
    found = stream_query(running, headers["outsider"])
    assert [kind for kind, _ in found] == ["results", "done"]
    assert found[-1][1]["answer"] is None and scripted_model.requests == []


def test_a_model_failing_mid_stream_ends_with_an_error_event_holding_the_partial_answer(assistant_served, scripted_model):
    running, headers, raw = assistant_served
    scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander ", "Fleming [1]", " and"], fail_after=2))

    found = stream_query(running, headers["outsider"], answer=True)

    assert [kind for kind, _ in found] == ["results", "token", "token", "error"]
    end = found[-1][1]
    assert end["error"]["code"] == "ModelError" and "failed mid-answer" in end["error"]["message"]
    assert end["answer"] == "Alexander Fleming [1]" and [c["marker"] for c in end["citations"]] == ["[1]"]
    assert [issue["code"] for issue in end["issues"]] == ["answer_failed"]
    text = json.dumps(found)
    assert "sk-test-ASSISTANT" not in text and raw["outsider"] not in text


def test_a_model_connection_dropped_mid_stream_is_an_error_event_too(assistant_served, scripted_model):
    running, headers, _ = assistant_served
    scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander ", "Fleming"], drop_after=1))
    found = stream_query(running, headers["outsider"], answer=True)
    assert [kind for kind, _ in found] == ["results", "token", "error"]
    assert "before the model finished" in found[-1][1]["error"]["message"]


def test_a_client_that_disconnects_stops_the_model_call(assistant_served, scripted_model):
    running, headers, _ = assistant_served
    reply = chat_stream_reply([f"word{i} " for i in range(500)], interval=0.01)
    scripted_model.enqueue("chat/completions", reply)

    with running.client() as client, client.stream("POST", "/api/v1/query", json={"text": QUESTION, "stream": True, "answer": True},
                                                   headers=headers["outsider"]) as response:
        for line in response.iter_lines():
            if line == "event: token":
                break  # the first token arrived: hang up

    assert reply.cut.wait(10), "the model kept streaming to a client that had left"
    assert len(reply.sent) < 250


def test_an_outsider_never_sees_nor_sends_the_model_a_document_it_may_not_read(assistant_served, scripted_model):
    running, headers, _ = assistant_served
    scripted_model.respond("chat/completions", lambda request: chat_stream_reply(["From the evidence [1]."]))
    question = "secret formula penicillin broth corn steep liquor lactose Peoria"

    def documents_and_prompt(who: str) -> tuple[set, str]:
        scripted_model.requests.clear()
        found = stream_query(running, headers[who], text=question, answer=True, top_k=10)
        ids = {result["metadata"]["document_id"] for result in found[0][1]["results"]}
        return ids, last_user_message(scripted_model.requests[-1]).partition("Evidence:")[2]

    outsider_ids, outsider_prompt = documents_and_prompt("outsider")
    chemist_ids, chemist_prompt = documents_and_prompt("chemist")
    assert "lab-note" not in outsider_ids and "corn steep" not in outsider_prompt
    assert "lab-note" in chemist_ids and "corn steep" in chemist_prompt


def test_a_bad_request_is_still_a_plain_http_error(assistant_served):
    running, headers, _ = assistant_served
    with running.client() as client:
        unknown = client.post("/api/v1/query", json={"text": QUESTION, "stream": True, "mode": "no_such_mode"}, headers=headers["outsider"])
        anonymous = client.post("/api/v1/query", json={"text": QUESTION, "stream": True})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "UnknownNameError"
    assert anonymous.status_code == 401


def test_without_a_language_model_done_says_the_answer_is_unavailable(served):
    found = stream_query(served, {}, answer=True, mode="full_text_search")
    assert [kind for kind, _ in found] == ["results", "done"]
    assert [issue["code"] for issue in found[-1][1]["issues"]] == ["answer_unavailable"]


def test_the_plain_json_answer_is_unchanged(assistant_served, scripted_model):
    running, headers, _ = assistant_served
    scripted_model.enqueue("chat/completions", body=chat_completion_body(json.dumps({"answer": "Fleming [1].", "sufficient": True, "citations": [1]})))
    with running.client() as client:
        body = client.post("/api/v1/query", json={"text": QUESTION, "answer": True}, headers=headers["outsider"]).json()
    assert body["answer"] == "Fleming [1]." and "stream" not in scripted_model.requests[0].json
