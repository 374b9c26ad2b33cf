"""The current span's traceparent goes out with every request to the model server; with no span, none does.
And the embeddings API's token count reaches the usage of the call that asked."""

from __future__ import annotations

from heta_framework.common.metered_models import metered
from heta_framework.common.models import Message
from heta_framework.common.usage import metering
from heta_framework.kb.tracing import span
from heta_framework.testing.http import chat_completion_body, chat_stream_reply, embeddings_body
from heta_framework.testing.spans import capture_spans
from heta_plugin_openai import OpenAIEmbeddingClient, OpenAILanguageClient


async def test_a_call_inside_a_span_sends_its_traceparent(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", body=chat_completion_body("hi"))
    scripted_server.enqueue("chat/completions", chat_stream_reply(["h", "i"]))
    client = OpenAILanguageClient(language_model())
    with capture_spans() as capture:
        with span("caller") as current:
            await client.complete([Message("user", "hello")])
            pieces = [delta.text async for delta in client.stream([Message("user", "hello")])]
    assert "".join(pieces) == "hi"
    context = current.get_span_context()
    for request in scripted_server.requests_to("chat/completions"):
        version, trace_id, span_id, flags = request.header("traceparent").split("-")
        assert (int(trace_id, 16), int(span_id, 16)) == (context.trace_id, context.span_id)
    assert capture.one("caller")


async def test_no_span_no_header(scripted_server, language_model, api_key):
    scripted_server.enqueue("chat/completions", body=chat_completion_body("hi"))
    await OpenAILanguageClient(language_model()).complete([Message("user", "hello")])
    (request,) = scripted_server.requests_to("chat/completions")
    assert request.header("traceparent") is None
    assert request.header("authorization") == f"Bearer {api_key}"  # the copy with headers keeps the key


async def test_the_embeddings_token_count_is_the_calls_usage(scripted_server, embedding_model):
    scripted_server.enqueue("embeddings", body=embeddings_body([[1.0, 0.0], [0.0, 1.0]], prompt_tokens=7))
    config = embedding_model(dimension=2)
    client = metered(OpenAIEmbeddingClient(config), config)
    with metering() as meter:
        await client.embed(["a b c", "d e f g"])
    assert meter.to_dict()["models"]["openai/test-embedding"] == {"kind": "embedding", "calls": 1, "texts": 2, "tokens": 7}
