from __future__ import annotations

import json

import pytest
from heta_framework.common.models import Completion, LanguageClient, Message
from heta_framework.testing.http import chat_completion_body, last_user_message
from heta_plugin_openai import OpenAILanguageClient

SCHEMA = {
    "title": "Entity list",
    "type": "object",
    "properties": {"entities": {"type": "array", "items": {"type": "string"}}},
    "required": ["entities"],
}


async def test_chat_completion_returns_text_and_usage(scripted_server, language_model, api_key):
    scripted_server.enqueue("chat/completions", body=chat_completion_body("Paris.", prompt_tokens=21, completion_tokens=2))
    client = OpenAILanguageClient(language_model())
    assert isinstance(client, LanguageClient)

    completion = await client.complete(
        [Message("system", "Be brief."), Message("user", "Capital of France?")], temperature=0.3, max_tokens=50
    )

    assert completion == Completion(text="Paris.", prompt_tokens=21, completion_tokens=2)
    (request,) = scripted_server.requests
    assert request.method == "POST" and request.path == "/v1/chat/completions"
    assert request.header("authorization") == f"Bearer {api_key}"
    assert request.json["model"] == "test-model"  # the provider prefix is not sent
    assert request.json["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
    ]
    assert request.json["temperature"] == 0.3
    assert request.json["max_tokens"] == 50
    assert "response_format" not in request.json


async def test_json_schema_is_sent_as_response_format_json_schema(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", body=chat_completion_body('{"entities": ["Paris"]}'))
    client = OpenAILanguageClient(language_model())

    completion = await client.complete([Message("user", "Entities in: Paris is big.")], json_schema=SCHEMA)

    assert json.loads(completion.text) == {"entities": ["Paris"]}
    body = scripted_server.requests[0].json
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "Entity_list", "schema": SCHEMA, "strict": False},
    }
    assert body["messages"] == [{"role": "user", "content": "Entities in: Paris is big."}]


async def test_json_object_mode_asks_for_json_in_words_and_unfences_the_answer(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", body=chat_completion_body('```json\n{"entities": []}\n```'))
    client = OpenAILanguageClient(language_model(json_mode="object", max_tokens=99, max_tokens_param="max_completion_tokens"))

    completion = await client.complete([Message("user", "Entities in: nothing.")], json_schema=SCHEMA)

    assert completion.text == '{"entities": []}'
    body = scripted_server.requests[0].json
    assert body["response_format"] == {"type": "json_object"}
    instruction = body["messages"][-1]
    assert instruction["role"] == "system" and "JSON" in instruction["content"] and '"entities"' in instruction["content"]
    assert body["max_completion_tokens"] == 99 and "max_tokens" not in body


async def test_json_mode_none_sends_no_response_format(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", body=chat_completion_body("{}"))
    client = OpenAILanguageClient(language_model(json_mode="none", temperature=1.0, extra_body={"top_k": 5}))

    await client.complete([Message("user", "hi")], json_schema=SCHEMA, temperature=0.0)

    body = scripted_server.requests[0].json
    assert "response_format" not in body
    assert body["temperature"] == 1.0  # the option replaces the caller's value
    assert body["top_k"] == 5


async def test_responder_answers_by_request_content(scripted_server, language_model):
    scripted_server.respond("chat/completions", lambda request: chat_completion_body(last_user_message(request).upper()))
    client = OpenAILanguageClient(language_model())

    answers = [await client.complete([Message("user", text)]) for text in ("one", "two")]

    assert [a.text for a in answers] == ["ONE", "TWO"]


async def test_missing_usage_counts_as_zero(scripted_server, language_model):
    body = chat_completion_body("ok")
    del body["usage"]
    scripted_server.enqueue("chat/completions", body=body)

    completion = await OpenAILanguageClient(language_model()).complete([Message("user", "hi")])

    assert completion == Completion(text="ok", prompt_tokens=0, completion_tokens=0)


def test_unknown_option_is_a_clear_error(language_model):
    from heta_framework.errors import ModelError

    with pytest.raises(ModelError, match=r"Unknown option\(s\) 'concurrencyy'.*Known options: .*concurrency"):
        OpenAILanguageClient(language_model(concurrencyy=3))
