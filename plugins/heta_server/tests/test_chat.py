"""The OpenAI-compatible endpoints, driven by the real ``openai`` client against uvicorn on 127.0.0.1, with the
language model's answers scripted (whole, streamed, failing)."""

from __future__ import annotations

import json
import shutil

import httpx
import openai
import pytest
from heta_framework.testing.http import chat_completion_body, chat_stream_reply, last_user_message
from heta_server.config import ServerConfig
from heta_server.tokens import parse_tokens, token_hash

QUESTION = "Who discovered penicillin?"


def client_for(running, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{running.url}/v1", api_key=token, max_retries=0, timeout=60)


def ask(client: openai.OpenAI, question: str = QUESTION, model: str = "heta", **kwargs):
    return client.chat.completions.create(model=model, messages=[{"role": "system", "content": "Be brief."},
                                                                 {"role": "user", "content": "Hello"},
                                                                 {"role": "assistant", "content": "Hi."},
                                                                 {"role": "user", "content": question}], **kwargs)


def test_models_lists_the_best_mode_and_every_available_one(assistant_served):
    running, _, raw = assistant_served
    ids = [model.id for model in client_for(running, raw["outsider"]).models.list()]
    assert ids == ["heta", *(f"heta:{mode}" for mode in running.kb.available_queries)] and "heta:full_text_search" in ids
    assert "heta:vector_search" not in ids  # not built in this knowledge base


def test_a_chat_completion_is_a_grounded_answer_with_its_sources(assistant_served, scripted_model):
    running, _, raw = assistant_served
    scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander Fleming ", "in 1928 [1]."], prompt_tokens=50))

    completion = ask(client_for(running, raw["outsider"]), model="heta:full_text_search", temperature=0.3, max_tokens=200)

    content = completion.choices[0].message.content
    assert content.startswith("Alexander Fleming in 1928 [1].\n\nSources:\n[1] ")
    assert "penicillin" in content.split("Sources:")[1]
    assert completion.choices[0].finish_reason == "stop" and completion.model == "heta:full_text_search"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (50, 2)
    extra = completion.model_extra
    assert extra["citations"][0]["document_id"] == "penicillin" and extra["heta"]["mode"] == "full_text_search"
    (request,) = scripted_model.requests
    assert last_user_message(request).startswith(f"Question: {QUESTION}")  # the last user message is the query
    assert request.json["temperature"] == 0.3 and request.json["max_tokens"] == 200
    scripted_model.check()


def test_stream_true_streams_chunks_and_usage(assistant_served, scripted_model):
    running, _, raw = assistant_served
    scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander ", "Fleming [1]."], prompt_tokens=40))

    chunks = list(ask(client_for(running, raw["outsider"]), stream=True, stream_options={"include_usage": True}))

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Alexander Fleming [1].\n\nSources:\n[1] ")
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert pieces[:2] == ["Alexander ", "Fleming [1]."]  # as the model streamed them, not all at once
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens == 40


def test_a_model_failing_mid_stream_raises_in_the_client_and_a_whole_answer_is_502(assistant_served, scripted_model):
    running, _, raw = assistant_served
    client = client_for(running, raw["outsider"])
    scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander ", "Fleming"], fail_after=1))
    received = []
    with pytest.raises(openai.APIError, match="failed mid-answer"):
        for chunk in ask(client, stream=True):
            received.append(chunk)
    assert any(c.choices and c.choices[0].delta.content == "Alexander " for c in received)

    scripted_model.enqueue("chat/completions", chat_stream_reply(["Alexander "], drop_after=0))
    with pytest.raises(openai.InternalServerError) as raised:
        ask(client)
    assert raised.value.status_code == 502 and "sk-test-ASSISTANT" not in str(raised.value.body)


@pytest.mark.parametrize(("fields", "param"), [
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}]}, "tools"),
    ({"n": 2}, "n"),
    ({"response_format": {"type": "json_object"}}, "response_format"),
    ({"logprobs": True}, "logprobs"),
    ({"extra_body": {"frobnicate": 1}}, "frobnicate"),
])
def test_what_heta_cannot_do_is_refused_by_name(assistant_served, scripted_model, fields, param):
    running, _, raw = assistant_served
    with pytest.raises(openai.BadRequestError) as raised:
        ask(client_for(running, raw["outsider"]), **fields)
    assert raised.value.body["code"] == "UnsupportedParameter" and raised.value.body["details"]["param"] == param
    assert scripted_model.requests == []


def test_sampling_fields_are_accepted_and_named_as_ignored(assistant_served, scripted_model):
    running, _, raw = assistant_served
    scripted_model.enqueue("chat/completions", chat_stream_reply(["Fleming [1]."]))
    raw_response = client_for(running, raw["outsider"]).chat.completions.with_raw_response.create(
        model="heta", messages=[{"role": "user", "content": QUESTION}], top_p=0.5, seed=7, user="u1",
        extra_body={"heta": {"top_k": 2}})
    assert raw_response.headers["x-heta-ignored-fields"] == "seed, top_p, user"
    assert raw_response.parse().choices[0].message.content.startswith("Fleming [1].")
    assert last_user_message(scripted_model.requests[0]).count("\n[") <= 2  # top_k=2: at most two passages


def test_the_token_rule_and_unknown_models(assistant_served, scripted_model):
    running, _, raw = assistant_served
    with pytest.raises(openai.AuthenticationError):
        ask(client_for(running, "not-a-token-of-this-server"))
    for model in ("gpt-4o", "heta:no_such_mode", "heta:elsewhere:full_text_search", "heta::"):
        with pytest.raises(openai.NotFoundError) as raised:
            ask(client_for(running, raw["outsider"]), model=model)
        assert raised.value.body["code"] == "UnknownModel"
    assert scripted_model.requests == []


def test_an_outsider_chat_never_reaches_a_document_it_may_not_read(assistant_served, scripted_model):
    running, _, raw = assistant_served
    scripted_model.respond("chat/completions", lambda request: chat_stream_reply(["From the evidence [1]."]))
    question = "secret formula penicillin broth corn steep liquor lactose Peoria"

    def evidence_and_citations(who: str) -> tuple[str, set]:
        scripted_model.requests.clear()
        completion = ask(client_for(running, raw[who]), question, extra_body={"heta": {"top_k": 10}})
        results = {r["document_id"] for r in completion.model_extra["heta"]["results"]}
        return last_user_message(scripted_model.requests[-1]).partition("Evidence:")[2], results

    outsider_evidence, outsider_docs = evidence_and_citations("outsider")
    chemist_evidence, chemist_docs = evidence_and_citations("chemist")
    assert "corn steep" not in outsider_evidence and "lab-note" not in outsider_docs
    assert "corn steep" in chemist_evidence and "lab-note" in chemist_docs


def test_without_a_language_model_the_message_lists_the_best_passages(served):
    completion = client_for(served, "no-token-needed-on-loopback").chat.completions.create(
        model="heta:full_text_search", messages=[{"role": "user", "content": QUESTION}])
    content = completion.choices[0].message.content
    assert content.startswith("No language model is configured for this knowledge base; the best passages:\n\n[1] ")
    assert "Fleming" in content and completion.usage.total_tokens == 0


def test_tenants_are_models_and_a_token_sees_only_its_own(answer_kb, tmp_path, scripted_model, server_factory):
    other = tmp_path / "lab-kb"
    shutil.copytree(answer_kb, other)
    raw = {"outsider": "tok-outsider-0123456789abcdef", "chemist": "tok-chemist-0123456789abcdef"}

    table = parse_tokens({"tokens": [
        {"sha256": token_hash(raw["outsider"]), "principal": "outsider", "kbs": ["default"], "rights": ["read"]},
        {"sha256": token_hash(raw["chemist"]), "principal": "chemist", "groups": ["group:lab"], "kbs": ["lab"], "rights": ["read"]},
    ]})
    running = server_factory(answer_kb, ServerConfig(tokens=table), kbs={"lab": other})
    outsider_ids = {m.id for m in client_for(running, raw["outsider"]).models.list()}
    chemist_ids = {m.id for m in client_for(running, raw["chemist"]).models.list()}
    assert "heta" in outsider_ids and not any(i.startswith("heta:lab:") for i in outsider_ids)
    assert "heta:lab:full_text_search" in chemist_ids and "heta" not in chemist_ids
    with pytest.raises(openai.NotFoundError):
        ask(client_for(running, raw["outsider"]), model="heta:lab:full_text_search")
    scripted_model.enqueue("chat/completions", chat_stream_reply(["Peoria [1]."]))
    completion = ask(client_for(running, raw["chemist"]), "corn steep liquor broth", model="heta:lab:full_text_search")
    assert completion.model_extra["heta"]["results"][0]["document_id"] == "lab-note"


def test_a_body_that_is_not_a_chat_request_is_422(assistant_served):
    running, headers, _ = assistant_served
    with httpx.Client(base_url=running.url) as client:
        response = client.post("/v1/chat/completions", json={"model": "heta"}, headers=headers["outsider"])
    assert response.status_code == 422 and response.json()["error"]["code"] == "InvalidRequest"
    assert json.dumps(chat_completion_body("x"))  # the scripted server's whole-answer body stays importable
