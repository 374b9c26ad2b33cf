"""A real small knowledge base built by the graph plugin (nlp extractor, MiniLM, FAISS, SQLite)."""

from __future__ import annotations

from typing import Any

import pytest
from heta_framework.testing import import_installed

for _name in ("heta_plugin_graph", "heta_plugin_vector"):
    import_installed(_name)

import heta_plugin_lightrag  # noqa: E402
import heta_plugin_local  # noqa: E402
import heta_plugin_openai  # noqa: E402
from heta_framework.kb import KnowledgeBase, KnowledgeModels  # noqa: E402
from heta_framework.testing import make_registry  # noqa: E402
from heta_plugin_graph.testing import (  # noqa: E402, F401  (local_model and server are fixtures)
    DOCUMENTS,
    graph_recipe,
    local_model,
    offline_models,
    scripted_language_models,
    server,
)

import heta_plugin_graph  # noqa: E402
import heta_plugin_vector  # noqa: E402


@pytest.fixture
def registry(local_model):
    return make_registry(heta_plugin_vector, heta_plugin_local, heta_plugin_graph, heta_plugin_openai, heta_plugin_lightrag)


async def build(path, registry, models: KnowledgeModels) -> KnowledgeBase:
    kb = KnowledgeBase.create(path, graph_recipe(models), registry=registry)
    report = await kb.build(list(DOCUMENTS))
    assert report.issues == []
    return kb


@pytest.fixture
async def offline_kb(tmp_path, registry):
    return await build(tmp_path / "kb", registry, offline_models())


@pytest.fixture
def llm_kb(tmp_path, registry, server):
    """An async factory: a KB whose recipe has the scripted language model (``**options`` are the client's)."""

    async def make(**options: Any) -> KnowledgeBase:
        return await build(tmp_path / "kb", registry, scripted_language_models(server, **options))

    return make


@pytest.fixture
def offline_kb_path(tmp_path, registry):
    """The offline knowledge base, built and closed (for core's query-engine suite, which opens it itself)."""
    with KnowledgeBase.create(tmp_path / "kb", graph_recipe(offline_models()), registry=registry) as kb:
        kb.sync.build(list(DOCUMENTS))
    return tmp_path / "kb"
