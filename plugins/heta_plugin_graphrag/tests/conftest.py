"""A real small knowledge base built by the graph plugin (nlp extractor, MiniLM, FAISS, SQLite) and the GraphRAG steps."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest


def _installed_package(name: str):
    """Import the installed package, not a distribution folder of the same name (namespace-module shadowing)."""
    placeholder = sys.modules.get(name)
    if placeholder is not None and getattr(placeholder, "__file__", None) is None:
        del sys.modules[name]
    return importlib.import_module(name)


for _name in ("heta_plugin_graph", "heta_plugin_vector"):
    _installed_package(_name)

import heta_plugin_graphrag  # noqa: E402
import heta_plugin_local  # noqa: E402
import heta_plugin_openai  # noqa: E402
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments  # noqa: E402
from heta_framework.common.models import EmbeddingModel, LanguageModel  # noqa: E402
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument  # noqa: E402
from heta_framework.testing import make_registry  # noqa: E402
from heta_framework.testing.http import ScriptedServer  # noqa: E402
from heta_plugin_graphrag import CommunityReports, DetectCommunities  # noqa: E402
from heta_plugin_local import create_client  # noqa: E402

import heta_plugin_graph  # noqa: E402
import heta_plugin_vector  # noqa: E402
from heta_plugin_graph import HetaGraphProcedure  # noqa: E402
from heta_plugin_vector import EmbedChunks, IndexVectors  # noqa: E402

MODEL = "local/all-MiniLM-L6-v2"

DOCUMENTS = [
    SourceDocument(
        id="ocean", name="ocean.txt",
        text="The Pacific Ocean is the largest ocean on Earth. Blue whales feed on krill in the Pacific Ocean. "
        "Coral reefs protect coastlines from storms. The Great Barrier Reef lies off the coast of Australia.",
    ),
    SourceDocument(
        id="rivers", name="rivers.txt",
        text="The Amazon River flows into the Atlantic Ocean. The Pacific Ocean borders South America on the west. "
        "The Nile River flows through Egypt into the Mediterranean Sea.",
    ),
    SourceDocument(
        id="space", name="space.txt",
        text="Marie Curie won the Nobel Prize in Physics. Albert Einstein developed the theory of relativity in Berlin. "
        "The Hubble Space Telescope observes distant galaxies.",
    ),
    SourceDocument(id="shanghai", name="shanghai.txt", text="上海市是中国的直辖市之一。长江在上海附近流入东海。上海港是世界上最繁忙的港口之一。"),
]


@pytest.fixture(scope="session")
def local_model():
    client = create_client(EmbeddingModel(model_name=MODEL))
    client.model()  # load the weights once per session
    return client


@pytest.fixture
def registry(local_model):
    return make_registry(heta_plugin_vector, heta_plugin_local, heta_plugin_graph, heta_plugin_openai, heta_plugin_graphrag)


@pytest.fixture
def server():
    with ScriptedServer() as scripted:
        yield scripted


def recipe(models: KnowledgeModels, **report_options: Any) -> Recipe:
    steps = [ParseDocuments(), SplitDocuments(chunk_size=60, chunk_overlap=0), PersistChunks(), EmbedChunks(), IndexVectors(),
             HetaGraphProcedure(extractor="nlp"), DetectCommunities(), CommunityReports(**report_options)]
    return Recipe(models=models, steps=steps)


def llm_models(server: ScriptedServer, **options: Any) -> KnowledgeModels:
    """The real openai client against the scripted server, retrying quickly."""
    return KnowledgeModels(
        language=LanguageModel(
            model_name="openai/test-model", base_url=server.base_url, api_key="sk-test",
            options={"max_attempts": 2, "retry_initial_delay": 0.01, "retry_max_delay": 0.02, **options},
        ),
        embedding=EmbeddingModel(model_name=MODEL),
    )


async def build(path, registry, models: KnowledgeModels) -> KnowledgeBase:
    kb = KnowledgeBase.create(path, recipe(models), registry=registry)
    report = await kb.build(DOCUMENTS)
    assert report.issues == []
    return kb


@pytest.fixture
async def offline_kb(tmp_path, registry):
    return await build(tmp_path / "kb", registry, KnowledgeModels(embedding=EmbeddingModel(model_name=MODEL)))


@pytest.fixture
def llm_kb(tmp_path, registry, server):
    """An async factory: a KB whose recipe has the scripted language model (``**options`` are the client's)."""

    async def make(**options: Any) -> KnowledgeBase:
        return await build(tmp_path / "kb", registry, llm_models(server, **options))

    return make


@pytest.fixture
def offline_kb_path(tmp_path, registry):
    """The offline knowledge base, built and closed (for core's query-engine suite, which opens it itself)."""
    models = KnowledgeModels(embedding=EmbeddingModel(model_name=MODEL))
    with KnowledgeBase.create(tmp_path / "kb", recipe(models), registry=registry) as kb:
        kb.sync.build(DOCUMENTS)
    return tmp_path / "kb"


@pytest.fixture
def unbuilt_llm_kb(tmp_path, registry, server):
    """A factory: a new KB whose recipe has the scripted language model, not built yet (tests script the server first)."""

    def make(report_options: dict[str, Any] | None = None, **options: Any) -> KnowledgeBase:
        return KnowledgeBase.create(tmp_path / "kb", recipe(llm_models(server, **options), **(report_options or {})), registry=registry)

    return make


@pytest.fixture
def documents() -> list[SourceDocument]:
    return list(DOCUMENTS)
