"""Streamed chat completions through the real ``openai`` client against the scripted server's streams."""

from __future__ import annotations

import asyncio

import pytest
from heta_framework.common.model_streaming import CompletionDelta, stream_completion
from heta_framework.common.models import Completion, Message
from heta_framework.errors import ModelError
from heta_framework.testing.http import chat_completion_body, chat_stream_reply, openai_error_body
from heta_plugin_openai import OpenAILanguageClient

QUESTION = [Message("user", "Who discovered penicillin?")]


async def collect(client, **kwargs) -> list[CompletionDelta]:
    return [delta async for delta in stream_completion(client, QUESTION, **kwargs)]


async def test_pieces_arrive_in_order_with_usage_last(scripted_server, language_model, api_key):
    scripted_server.enqueue("chat/completions", chat_stream_reply(["Alexander ", "Fleming", " [1]."], prompt_tokens=42))
    client = OpenAILanguageClient(language_model())

    deltas = await collect(client, temperature=0.2, max_tokens=64)

    assert [d.text for d in deltas] == ["Alexander ", "Fleming", " [1].", ""]
    assert (deltas[-1].prompt_tokens, deltas[-1].completion_tokens) == (42, 3)
    (request,) = scripted_server.requests
    assert request.json["stream"] is True and request.json["stream_options"] == {"include_usage": True}
    assert request.json["max_tokens"] == 64 and request.json["temperature"] == 0.2
    assert request.header("authorization") == f"Bearer {api_key}"
    scripted_server.check()


async def test_an_error_event_mid_stream_raises_after_the_pieces_before_it(scripted_server, language_model, api_key):
    scripted_server.enqueue("chat/completions", chat_stream_reply(["Alexander ", "Fleming", " [1]."], fail_after=2))
    client = OpenAILanguageClient(language_model())
    seen: list[str] = []

    with pytest.raises(ModelError) as raised:
        async for delta in stream_completion(client, QUESTION):
            seen.append(delta.text)

    assert seen == ["Alexander ", "Fleming"]
    assert "mid-answer" in str(raised.value) and api_key not in str(raised.value)
    assert len(scripted_server.requests) == 1  # pieces had gone out: no retry


async def test_a_stream_cut_off_without_a_finish_raises(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", chat_stream_reply(["Alexander ", "Fleming"], drop_after=1))
    client = OpenAILanguageClient(language_model())

    with pytest.raises(ModelError, match="before the model finished"):
        await collect(client)


async def test_opening_is_retried_like_any_call(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", status=429, body=openai_error_body("slow down"), headers={"Retry-After": "0"})
    scripted_server.enqueue("chat/completions", chat_stream_reply(["ok"]))
    client = OpenAILanguageClient(language_model())

    assert "".join(d.text for d in await collect(client)) == "ok"
    assert len(scripted_server.requests) == 2


async def test_a_reader_that_stops_closes_the_connection(scripted_server, language_model):
    reply = chat_stream_reply([f"w{i} " for i in range(400)], interval=0.01)
    scripted_server.enqueue("chat/completions", reply)
    client = OpenAILanguageClient(language_model())
    first = asyncio.Event()

    async def read() -> None:
        async for delta in stream_completion(client, QUESTION):
            if delta.text:
                first.set()

    task = asyncio.create_task(read())
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await asyncio.to_thread(reply.cut.wait, 10), "the model server never saw the stream closed"
    assert len(reply.sent) < 100


async def test_a_client_without_stream_yields_its_whole_answer_once():
    class Whole:
        model_name = "fake/whole"

        async def complete(self, messages, *, json_schema=None, temperature=0.0, max_tokens=None):
            return Completion("All at once [1].", prompt_tokens=3, completion_tokens=4)

    assert await collect(Whole()) == [CompletionDelta("All at once [1].", 3, 4)]


async def test_the_concurrency_slot_is_held_while_a_stream_is_read(scripted_server, language_model):
    scripted_server.respond("chat/completions", lambda request: chat_stream_reply(["a", "b", "c"], interval=0.05))
    client = OpenAILanguageClient(language_model(concurrency=1))

    await asyncio.gather(collect(client), collect(client), collect(client))

    assert scripted_server.max_in_flight == 1 and len(scripted_server.requests) == 3


def test_plain_completion_body_is_unchanged():
    assert chat_completion_body("x")["object"] == "chat.completion"


def test_a_broken_stream_is_caught_in_the_http_library_openai_is_built_on():
    # openai 3 reads its streams with httpx2, earlier versions with httpx: a connection that breaks mid-answer
    # raises that library's HTTPError, which must become a ModelError, not escape
    import importlib

    import openai
    from heta_plugin_openai.connection import TRANSPORT_ERRORS

    library = next(c.__module__.split(".")[0] for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__module__.startswith("httpx"))
    assert importlib.import_module(library).HTTPError in TRANSPORT_ERRORS
