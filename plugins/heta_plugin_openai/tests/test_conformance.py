"""The OpenAI clients pass core's embedding- and language-client suites against the scripted server."""

from __future__ import annotations

import hashlib
import json

import pytest
from heta_framework.testing.conformance import EmbeddingClientSuite, LanguageClientSuite
from heta_framework.testing.http import chat_completion_body, embeddings_body, last_user_message
from heta_plugin_openai import OpenAIEmbeddingClient, OpenAILanguageClient


def vector_for(text: str) -> list[float]:
    """A deterministic 8-d vector per text: the suite checks order and batching against it."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [b / 255.0 + 0.01 for b in digest[:8]]


def echo(request):
    """Answer with the last user message, as JSON when the request asks for a schema."""
    text = last_user_message(request)
    if request.json.get("response_format"):
        text = json.dumps({"answer": text}, ensure_ascii=False)
    return chat_completion_body(text, prompt_tokens=len(request.json["messages"]), completion_tokens=1)


class TestOpenAIEmbedding(EmbeddingClientSuite):
    @pytest.fixture
    def embedding_client(self, scripted_server, embedding_model):
        scripted_server.respond("embeddings", lambda request: embeddings_body([vector_for(t) for t in request.json["input"]]))
        return OpenAIEmbeddingClient(embedding_model(batch_size=64))


class TestOpenAILanguage(LanguageClientSuite):
    @pytest.fixture
    def language_client(self, scripted_server, language_model):
        scripted_server.respond("chat/completions", echo)
        return OpenAILanguageClient(language_model())

    def expected_reply(self, messages, json_schema=None):
        text = [m.content for m in messages if m.role == "user"][-1]
        return json.dumps({"answer": text}, ensure_ascii=False) if json_schema else text
