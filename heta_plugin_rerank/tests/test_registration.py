from __future__ import annotations

import pytest
from heta_framework.common.models import RerankModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing import make_registry
from heta_framework.testing.http import rerank_body

import heta_plugin_rerank
from heta_plugin_rerank import CohereRerankClient, LocalCrossEncoderReranker


def test_registers_cohere_and_local_rerankers():
    registry = make_registry(heta_plugin_rerank)
    assert registry.model_provider("cohere", "reranker") is heta_plugin_rerank.COHERE_PROVIDER
    assert registry.model_provider("local", "reranker") is heta_plugin_rerank.LOCAL_PROVIDER
    assert {"cohere", "local"} <= registry.model_provider_names()


def test_sits_beside_the_openai_provider():
    heta_plugin_openai = pytest.importorskip("heta_plugin_openai")  # another distribution: absent when tested alone
    registry = make_registry(heta_plugin_openai, heta_plugin_rerank)
    assert registry.model_provider("openai", "language") is heta_plugin_openai.PROVIDER
    assert registry.model_provider("cohere", "reranker") is heta_plugin_rerank.COHERE_PROVIDER


def test_is_found_through_the_heta_entry_point():
    registry = PluginRegistry.from_entry_points()
    assert registry.model_provider("cohere", "reranker") is heta_plugin_rerank.COHERE_PROVIDER
    # "local" rerankers and heta-plugin-local's "local" embedders coexist: providers are keyed per kind
    assert registry.model_provider("local", "reranker") is heta_plugin_rerank.LOCAL_PROVIDER
    assert not [f for f in registry.failed if f.distribution == "heta-plugin-rerank"]


async def test_knowledge_base_resolves_the_reranker_clients(tmp_path, scripted_server, api_key, tiny_cross_encoder):
    models = KnowledgeModels(
        reranker=RerankModel(model_name="cohere/rerank-v3.5", base_url=scripted_server.url, api_key=api_key),
        named={"reranker": {"offline": RerankModel(model_name=f"local/{tiny_cross_encoder}")}},
    )
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(models=models), registry=make_registry(heta_plugin_rerank))

    reranker = kb.get_component("models.reranker")
    offline = kb.get_component("models.reranker.offline")

    assert isinstance(reranker, CohereRerankClient) and isinstance(offline, LocalCrossEncoderReranker)
    assert scripted_server.requests == []  # nothing connects before the first call
    scripted_server.enqueue("/v2/rerank", body=rerank_body([(1, 0.9), (0, 0.2)]))
    assert [h.index for h in await reranker.rerank("q", ["a", "b"], top_n=2)] == [1, 0]
    assert len(await offline.rerank("whales", ["whales sing", "dogs bark"], top_n=1)) == 1
    kb.close()
