"""A server that answers 200 with an HTML page, broken JSON or JSON of another shape: retried like a 5xx, then a clear ModelError."""

from __future__ import annotations

import pytest
from heta_framework.common.models import Message
from heta_framework.errors import ModelError
from heta_framework.testing.http import Reply, chat_completion_body, embeddings_body
from heta_plugin_openai import OpenAIEmbeddingClient, OpenAILanguageClient

HI = [Message("user", "hi")]

MALFORMED = {
    "html page": (Reply(body="<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>", headers={"Content-Type": "text/html"}), "an HTML page"),
    "cut-off json": (Reply(body='{"id": "chatcmpl-1", "choices": [', headers={"Content-Type": "application/json"}), "invalid JSON"),
    "a json list": (Reply(body=[1, 2, 3]), "JSON of another shape (list)"),
    "json without the fields": (Reply(body={"id": "x", "object": "something"}), "JSON without"),
}


@pytest.mark.parametrize("case", MALFORMED)
async def test_malformed_chat_answers_are_retried_then_a_clear_model_error(scripted_server, language_model, api_key, case):
    reply, says = MALFORMED[case]
    scripted_server.enqueue("chat/completions", reply, times=3)
    with pytest.raises(ModelError) as raised:
        await OpenAILanguageClient(language_model(max_attempts=3)).complete(HI)
    message = str(raised.value)
    assert says in message and "after 3 attempt(s)" in message and "base_url" in message
    assert api_key not in message
    assert raised.value.__suppress_context__  # raised from None: no raw client exception chained
    assert len(scripted_server.requests) == 3  # every attempt was made, as for a 5xx
    scripted_server.check()


@pytest.mark.parametrize("case", MALFORMED)
async def test_malformed_embedding_answers_are_retried_then_a_clear_model_error(scripted_server, embedding_model, case):
    reply, says = MALFORMED[case]
    scripted_server.enqueue("embeddings", reply, times=2)
    with pytest.raises(ModelError, match="instead of the OpenAI API's JSON, after 2 attempt") as raised:
        await OpenAIEmbeddingClient(embedding_model(max_attempts=2)).embed(["a"])
    assert says in str(raised.value)
    assert len(scripted_server.requests) == 2


async def test_one_html_page_then_a_good_answer_succeeds(scripted_server, language_model, embedding_model):
    scripted_server.enqueue("chat/completions", MALFORMED["html page"][0])
    scripted_server.enqueue("chat/completions", body=chat_completion_body("fine"))
    scripted_server.enqueue("embeddings", MALFORMED["cut-off json"][0])
    scripted_server.enqueue("embeddings", body=embeddings_body([[0.5, 0.5]]))

    assert (await OpenAILanguageClient(language_model()).complete(HI)).text == "fine"
    assert (await OpenAIEmbeddingClient(embedding_model()).embed(["a"])).tolist() == [[0.5, 0.5]]
    assert len(scripted_server.requests) == 4
    scripted_server.check()
