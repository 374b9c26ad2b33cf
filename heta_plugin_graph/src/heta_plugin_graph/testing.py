"""Test helpers for plugins built on the graph (GraphRAG, LightRAG, ...): a small real nlp-graph knowledge base.

Needs the graph plugin's test extra (heta-plugin-vector, heta-plugin-local,
heta-plugin-openai) and pytest. A conftest takes what it needs::

    from heta_plugin_graph.testing import DOCUMENTS, graph_recipe, local_model, scripted_language_models, server  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.kb import KnowledgeModels, Recipe, SourceDocument
from heta_framework.testing.http import ScriptedServer

from heta_plugin_graph.procedure import HetaGraphProcedure

MODEL = "local/all-MiniLM-L6-v2"

#: four short documents: shared entities across English texts (Pacific Ocean), and one Chinese text
DOCUMENTS = (
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
)


def graph_recipe(models: KnowledgeModels, *more_steps: Any) -> Recipe:
    """Parse, split small, persist, embed, FAISS, the nlp graph, then ``more_steps``."""
    from heta_plugin_vector import EmbedChunks, IndexVectors

    steps = [ParseDocuments(), SplitDocuments(chunk_size=60, chunk_overlap=0), PersistChunks(), EmbedChunks(), IndexVectors(),
             HetaGraphProcedure(extractor="nlp"), *more_steps]
    return Recipe(models=models, steps=steps)


def offline_models() -> KnowledgeModels:
    return KnowledgeModels(embedding=EmbeddingModel(model_name=MODEL))


def scripted_language_models(server: ScriptedServer, **options: Any) -> KnowledgeModels:
    """The real openai client against the scripted server, retrying quickly (``**options`` are the client's)."""
    return KnowledgeModels(
        language=LanguageModel(
            model_name="openai/test-model", base_url=server.base_url, api_key="sk-test",
            options={"max_attempts": 2, "retry_initial_delay": 0.01, "retry_max_delay": 0.02, **options},
        ),
        embedding=EmbeddingModel(model_name=MODEL),
    )


@pytest.fixture(scope="session")
def local_model() -> Any:
    """The MiniLM client, weights loaded once per session (loaded models are shared per process)."""
    from heta_plugin_local import create_client

    client = create_client(EmbeddingModel(model_name=MODEL))
    client.model()
    return client


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted
