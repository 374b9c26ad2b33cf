"""A real small knowledge base built by the graph plugin (nlp extractor, MiniLM, FAISS, SQLite) and the GraphRAG steps."""

from __future__ import annotations

from typing import Any

import pytest
from heta_framework.testing import import_installed

for _name in ("heta_plugin_graph", "heta_plugin_vector"):
    import_installed(_name)

import heta_plugin_graphrag  # noqa: E402
import heta_plugin_local  # noqa: E402
import heta_plugin_openai  # noqa: E402
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument  # noqa: E402
from heta_framework.testing import make_registry  # noqa: E402
from heta_plugin_graph.testing import (  # noqa: E402, F401  (local_model and server are fixtures)
    DOCUMENTS,
    graph_recipe,
    local_model,
    offline_models,
    scripted_language_models,
    server,
)
from heta_plugin_graphrag import CommunityReports, DetectCommunities  # noqa: E402

import heta_plugin_graph  # noqa: E402
import heta_plugin_vector  # noqa: E402


@pytest.fixture
def registry(local_model):
    return make_registry(heta_plugin_vector, heta_plugin_local, heta_plugin_graph, heta_plugin_openai, heta_plugin_graphrag)


def recipe(models: KnowledgeModels, **report_options: Any) -> Recipe:
    return graph_recipe(models, DetectCommunities(), CommunityReports(**report_options))


async def build(path, registry, models: KnowledgeModels) -> KnowledgeBase:
    kb = KnowledgeBase.create(path, recipe(models), registry=registry)
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
    with KnowledgeBase.create(tmp_path / "kb", recipe(offline_models()), registry=registry) as kb:
        kb.sync.build(list(DOCUMENTS))
    return tmp_path / "kb"


@pytest.fixture
def unbuilt_llm_kb(tmp_path, registry, server):
    """A factory: a new KB whose recipe has the scripted language model, not built yet (tests script the server first)."""

    def make(report_options: dict[str, Any] | None = None, **options: Any) -> KnowledgeBase:
        models = scripted_language_models(server, **options)
        return KnowledgeBase.create(tmp_path / "kb", recipe(models, **(report_options or {})), registry=registry)

    return make


@pytest.fixture
def documents() -> list[SourceDocument]:
    return list(DOCUMENTS)
