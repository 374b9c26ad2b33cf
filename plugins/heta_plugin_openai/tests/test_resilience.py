"""Retries, time-outs, the concurrency bound and secrets, against the real openai client."""

from __future__ import annotations

import asyncio
import logging
import socket
import time

import pytest
from heta_framework.common.models import LanguageModel, Message
from heta_framework.errors import ModelError, ModelTimeoutError
from heta_framework.testing.http import chat_completion_body, embeddings_body, openai_error_body
from heta_plugin_openai import OpenAIEmbeddingClient, OpenAILanguageClient

HI = [Message("user", "hi")]


async def test_rate_limit_then_success(scripted_server, language_model, caplog):
    scripted_server.enqueue("chat/completions", status=429, body=openai_error_body("Rate limit reached", type="rate_limit"))
    scripted_server.enqueue("chat/completions", body=chat_completion_body("done"))

    with caplog.at_level(logging.WARNING):
        completion = await OpenAILanguageClient(language_model()).complete(HI)

    assert completion.text == "done"
    assert len(scripted_server.requests) == 2
    assert "retry 1/3" in caplog.text


async def test_server_errors_then_success(scripted_server, embedding_model):
    scripted_server.enqueue("embeddings", status=500, body=openai_error_body("boom", type="server_error"))
    scripted_server.enqueue("embeddings", status=503, body="Service Unavailable")
    scripted_server.enqueue("embeddings", body=embeddings_body([[1.0, 0.0]]))

    vectors = await OpenAIEmbeddingClient(embedding_model()).embed(["a"])

    assert vectors.tolist() == [[1.0, 0.0]]
    assert len(scripted_server.requests) == 3


async def test_retry_after_is_honoured(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", status=429, body=openai_error_body("wait"), headers={"Retry-After": "0.4"})
    scripted_server.enqueue("chat/completions", body=chat_completion_body("ok"))
    client = OpenAILanguageClient(language_model(retry_initial_delay=0.01))

    started = time.monotonic()
    assert (await client.complete(HI)).text == "ok"
    assert time.monotonic() - started >= 0.4


async def test_rate_limit_that_never_ends_is_a_model_error_after_max_attempts(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", status=429, body=openai_error_body("quota exceeded"), times=10)

    with pytest.raises(ModelError, match=r"429.*after 3 attempt\(s\).*concurrency.*quota exceeded") as raised:
        await OpenAILanguageClient(language_model(max_attempts=3)).complete(HI)

    assert not isinstance(raised.value, ModelTimeoutError)
    assert len(scripted_server.requests) == 3


async def test_bad_request_is_not_retried(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", status=400, body=openai_error_body("response_format is not supported"))

    with pytest.raises(ModelError, match=r"rejected chat completion .* status 400: response_format is not supported.*json_mode"):
        await OpenAILanguageClient(language_model()).complete(HI)

    assert len(scripted_server.requests) == 1


async def test_time_out_becomes_a_clear_model_timeout_error(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", body=chat_completion_body("too late"), delay=3, times=2)
    client = OpenAILanguageClient(language_model(timeout=0.2, max_attempts=2))

    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match=r"did not answer within 0.2s, after 2 attempt\(s\).*options.timeout"):
        await client.complete(HI)

    assert time.monotonic() - started < 2
    assert len(scripted_server.requests) == 2


async def test_a_slow_first_attempt_is_retried(scripted_server, language_model):
    scripted_server.enqueue("chat/completions", body=chat_completion_body("too late"), delay=3)
    scripted_server.enqueue("chat/completions", body=chat_completion_body("in time"))

    completion = await OpenAILanguageClient(language_model(timeout=0.3)).complete(HI)

    assert completion.text == "in time"


async def test_unreachable_server_says_to_check_base_url(api_key):
    with socket.socket() as probe:  # a port on 127.0.0.1 that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = LanguageModel(
        model_name="openai/test-model",
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key=api_key,
        options={"max_attempts": 2, "retry_initial_delay": 0.01},
    )

    with pytest.raises(ModelError, match="Could not connect to http://127.0.0.1.*Check base_url"):
        await OpenAILanguageClient(model).complete(HI)


async def test_concurrency_bound_holds_at_the_server(scripted_server, language_model):
    scripted_server.respond("chat/completions", lambda request: _slow(chat_completion_body("ok")))
    client = OpenAILanguageClient(language_model(concurrency=3))

    answers = await asyncio.gather(*(client.complete([Message("user", str(i))]) for i in range(12)))

    assert len(answers) == 12
    assert scripted_server.max_in_flight == 3  # requests did overlap, but never more than the bound
    assert client.connection.peak_in_flight == 3


async def test_embedding_batches_share_the_concurrency_bound(scripted_server, embedding_model):
    scripted_server.respond("embeddings", lambda request: _slow(embeddings_body([[1.0]] * len(request.json["input"]))))
    client = OpenAIEmbeddingClient(embedding_model(concurrency=2, batch_size=1))

    vectors = await client.embed([str(i) for i in range(8)])

    assert vectors.shape == (8, 1)
    assert scripted_server.max_in_flight == 2


async def test_api_key_never_appears_in_errors_or_logs(scripted_server, language_model, api_key, caplog):
    echo = f"Incorrect API key provided: {api_key}"  # some servers echo the key back
    scripted_server.enqueue("chat/completions", status=401, body=openai_error_body(echo, type="invalid_api_key"))
    scripted_server.enqueue("chat/completions", status=500, body=openai_error_body(echo), times=4)

    caplog.set_level(logging.DEBUG)
    with pytest.raises(ModelError) as unauthorized:
        await OpenAILanguageClient(language_model()).complete(HI)
    with pytest.raises(ModelError) as server_error:
        await OpenAILanguageClient(language_model()).complete(HI)

    assert "rejected the API key" in str(unauthorized.value) and "api_key_env" in str(unauthorized.value)
    assert "Incorrect API key provided: ***" in str(server_error.value)
    for error in (unauthorized.value, server_error.value):
        assert api_key not in str(error) and api_key not in repr(error)
        assert error.__cause__ is None and error.__suppress_context__
    assert scripted_server.requests[0].header("authorization") == f"Bearer {api_key}"  # it was really sent
    assert caplog.records  # the clients did log at debug level ...
    assert api_key not in caplog.text  # ... and never the key
    assert api_key not in repr(language_model()) and api_key not in repr(OpenAILanguageClient(language_model()))


def _slow(body, seconds: float = 0.15):
    time.sleep(seconds)  # runs in the server's handler thread
    return body
