from __future__ import annotations

import heta_plugin_openai
import pytest
from heta_framework.common.models import EmbeddingModel, LanguageModel, Message
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing import make_registry
from heta_framework.testing.http import chat_completion_body
from heta_plugin_openai import OpenAIEmbeddingClient, OpenAILanguageClient


def test_registers_language_and_embedding_providers():
    registry = make_registry(heta_plugin_openai)
    assert registry.model_provider("openai", "language") is heta_plugin_openai.PROVIDER
    assert registry.model_provider("openai", "embedding") is heta_plugin_openai.PROVIDER
    assert "openai" in registry.model_provider_names()


def test_is_found_through_the_heta_entry_point():
    registry = PluginRegistry.from_entry_points()
    assert registry.model_provider("openai", "language") is heta_plugin_openai.PROVIDER
    assert not [f for f in registry.failed if f.distribution == "heta-plugin-openai"]


async def test_knowledge_base_resolves_and_uses_the_clients(tmp_path, scripted_server, api_key):
    models = KnowledgeModels(
        language=LanguageModel(model_name="openai/test-model", base_url=scripted_server.base_url, api_key=api_key),
        embedding=EmbeddingModel(model_name="openai/test-embedding", base_url=scripted_server.base_url, options={"dimension": 8}),
    )
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(models=models), registry=make_registry(heta_plugin_openai))
    assert scripted_server.requests == []  # creating clients touches no network

    language = kb.get_component("models.language")
    embedding = kb.get_component("models.embedding")

    assert isinstance(language, OpenAILanguageClient) and language.model_name == "openai/test-model"
    assert isinstance(embedding, OpenAIEmbeddingClient) and embedding.dimension == 8
    assert scripted_server.requests == []
    scripted_server.enqueue("chat/completions", body=chat_completion_body("hello"))
    assert (await language.complete([Message("user", "hi")])).text == "hello"
    kb.close()


async def test_a_local_server_needs_no_key_but_openai_does(monkeypatch, scripted_server):
    from heta_framework.errors import ModelError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env-must-not-leave")
    scripted_server.enqueue("chat/completions", body=chat_completion_body("hi"))
    local = OpenAILanguageClient(LanguageModel(model_name="openai/llama", base_url=scripted_server.base_url))
    await local.complete([Message("user", "hi")])
    # the OpenAI key is not sent to other servers
    assert scripted_server.requests[0].header("authorization") == "Bearer heta-no-key"

    monkeypatch.delenv("OPENAI_API_KEY")
    cloud = OpenAILanguageClient(LanguageModel(model_name="openai/gpt-4o-mini"))  # creating it is fine ...
    with pytest.raises(ModelError, match="No API key for openai/gpt-4o-mini.*OPENAI_API_KEY.*base_url"):
        await cloud.complete([Message("user", "hi")])  # ... the first call says what to do


async def test_api_key_env_is_read_at_call_time(monkeypatch, scripted_server):
    monkeypatch.setenv("MY_LLM_KEY", "sk-from-my-env")
    scripted_server.enqueue("chat/completions", body=chat_completion_body("hi"))
    model = LanguageModel(model_name="openai/m", base_url=scripted_server.base_url, api_key_env="MY_LLM_KEY")
    await OpenAILanguageClient(model).complete([Message("user", "hi")])
    assert scripted_server.requests[0].header("authorization") == "Bearer sk-from-my-env"


def test_sync_callers_get_a_fresh_client_per_event_loop(scripted_server, api_key):
    import asyncio

    scripted_server.respond("chat/completions", lambda request: chat_completion_body("ok"))
    client = OpenAILanguageClient(LanguageModel(model_name="openai/m", base_url=scripted_server.base_url, api_key=api_key))
    # like kb.sync.query: each call runs in its own asyncio.run loop
    assert [asyncio.run(client.complete([Message("user", "hi")])).text for _ in range(2)] == ["ok", "ok"]
