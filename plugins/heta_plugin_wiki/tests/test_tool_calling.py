"""Tool calling in the language path: core's ``complete_with_tools`` through the real openai client against the
scripted server, which answers with ``tool_calls`` and records ``tools``, ``tool_choice`` and the ``tool`` messages."""

from __future__ import annotations

import json

import pytest
from heta_framework.common.models import (
    Completion,
    LanguageModel,
    Message,
    ToolCall,
    ToolCallingUnsupported,
    ToolSpec,
    complete_with_tools,
    supports_tools,
)
from heta_framework.testing.http import ScriptedServer, chat_completion_body, chat_tool_calls_body, tool_messages
from heta_plugin_openai.language import OpenAILanguageClient

SEARCH = ToolSpec("search", "Search the knowledge base.", {"type": "object", "properties": {"query": {"type": "string"}},
                                                            "required": ["query"]})


def client_for(server: ScriptedServer) -> OpenAILanguageClient:
    return OpenAILanguageClient(LanguageModel(model_name="openai/test-model", base_url=server.base_url, api_key="sk-test",
                                              options={"max_attempts": 1}))


async def test_a_reply_that_calls_tools_comes_back_as_tool_calls_and_the_request_offers_the_tools():
    with ScriptedServer() as server:
        server.enqueue("chat/completions", body=chat_tool_calls_body([("search", {"query": "krill"}), ("search", "{not json")],
                                                                     prompt_tokens=30, completion_tokens=7))
        client = client_for(server)
        reply = await complete_with_tools(client, [Message("user", "What do whales eat?")], [SEARCH], tool_choice="required")
        await client.aclose()
        server.check()
    assert reply.tool_calls == (ToolCall("call_0", "search", '{"query": "krill"}'), ToolCall("call_1", "search", "{not json"))
    assert (reply.text, reply.prompt_tokens, reply.completion_tokens) == ("", 30, 7)
    sent = server.requests[0].json
    assert sent["tools"] == [SEARCH.to_openai()] and sent["tool_choice"] == "required"
    assert sent["tools"][0]["function"]["parameters"]["required"] == ["query"]


async def test_tool_results_go_back_as_tool_messages_after_the_assistant_turn_that_asked():
    with ScriptedServer() as server:
        server.enqueue("chat/completions", body=chat_completion_body("Whales eat krill [c1]."))
        client = client_for(server)
        asked = ToolCall("call_0", "search", json.dumps({"query": "krill"}))
        messages = [Message("user", "What do whales eat?"), Message("assistant", "", tool_calls=(asked,)),
                    Message("tool", '{"results": ["c1"]}', tool_call_id="call_0")]
        reply = await complete_with_tools(client, messages, [SEARCH])
        await client.aclose()
    assert reply.text == "Whales eat krill [c1]." and reply.tool_calls == ()
    sent = server.requests[0].json["messages"]
    assert sent[1] == {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "search", "arguments": '{"query": "krill"}'}}]}
    assert tool_messages(server.requests[0]) == [{"role": "tool", "content": '{"results": ["c1"]}', "tool_call_id": "call_0"}]


async def test_plain_completions_are_unchanged_by_the_new_message_fields():
    with ScriptedServer() as server:
        server.enqueue("chat/completions", body=chat_completion_body("hello"))
        client = client_for(server)
        completion = await client.complete([Message("system", "be brief"), Message("user", "hi")])
        await client.aclose()
    assert completion.text == "hello"
    assert server.requests[0].json["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert "tools" not in server.requests[0].json


async def test_a_client_without_tool_calling_is_refused_with_its_name():
    class PlainClient:
        model_name = "fake/plain"

        async def complete(self, messages, **kwargs):
            return Completion("x")

    assert not supports_tools(PlainClient()) and supports_tools(OpenAILanguageClient(LanguageModel(model_name="openai/m")))
    with pytest.raises(ToolCallingUnsupported, match="fake/plain"):
        await complete_with_tools(PlainClient(), [Message("user", "hi")], [SEARCH])


async def test_a_streamed_turn_is_put_back_together_into_the_same_tool_calls():
    from heta_framework.testing.http import chat_stream_tool_calls_reply

    with ScriptedServer() as server:
        server.enqueue("chat/completions", chat_stream_tool_calls_reply(
            [("search", {"query": "krill and whales", "mode": "vector_search"}), ("read_document", {"document_id": "ocean"})],
            text="Looking.", pieces=3, prompt_tokens=40, completion_tokens=9))
        client = client_for(server)
        reply = await complete_with_tools(client, [Message("user", "What do whales eat?")], [SEARCH], stream=True)
        await client.aclose()
        server.check()
    assert reply.tool_calls == (ToolCall("call_0", "search", '{"query": "krill and whales", "mode": "vector_search"}'),
                                ToolCall("call_1", "read_document", '{"document_id": "ocean"}'))
    assert (reply.text, reply.prompt_tokens, reply.completion_tokens) == ("Looking.", 40, 9)
    sent = server.requests[0].json
    assert sent["stream"] is True and sent["tools"] == [SEARCH.to_openai()] and sent["tool_choice"] == "auto"


async def test_a_cut_off_streamed_turn_raises_instead_of_returning_half_a_call():
    from heta_framework.errors import ModelError
    from heta_framework.testing.http import chat_stream_tool_calls_reply

    with ScriptedServer() as server:
        server.enqueue("chat/completions", chat_stream_tool_calls_reply([("search", {"query": "krill"})], finish=False))
        client = client_for(server)
        with pytest.raises(ModelError, match="before the model finished"):
            await complete_with_tools(client, [Message("user", "hi")], [SEARCH], stream=True)
        await client.aclose()
