"""Test helpers for plugins built on the graph (GraphRAG, LightRAG, ...): a small real nlp-graph knowledge base.

Needs the graph plugin's test extra (heta-plugin-vector, heta-plugin-local,
heta-plugin-openai) and pytest. A conftest takes what it needs::

    from heta_plugin_graph.testing import DOCUMENTS, graph_recipe, local_model, scripted_language_models, server  # noqa: F401
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.kb import KnowledgeModels, Recipe, SourceDocument
from heta_framework.testing.http import RecordedRequest, Reply, ScriptedServer, chat_completion_body, last_user_message

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


# --- a scripted extraction model ----------------------------------------------------------------------


def request_kind(request: RecordedRequest) -> str:
    """Which graph prompt a chat request carries, from its JSON schema: entities | relations | groups | decisions."""
    schema = request.json["response_format"]["json_schema"]["schema"]
    return next(iter(schema["properties"]))


def prompt_message(request: RecordedRequest) -> str:
    """The user message that carries the task (a retry appends the validation error after it)."""
    users = [m["content"] for m in request.json["messages"] if m["role"] == "user"]
    return next((m for m in users if "<<<" in m or "Group " in m or "Item " in m), last_user_message(request))


def chunk_text(request: RecordedRequest) -> str:
    """The chunk an extraction request is about (between the prompt's ``<<<`` and ``>>>``)."""
    message = prompt_message(request)
    return message.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0] if "<<<" in message else message


class CapitalisedExtractor:
    """A scripted extraction model for any text: the entities of a chunk are its capitalised words (the first
    ``max_entities`` distinct ones), and each listed entity relates to the next. What it answers depends on
    the request alone, so builds on any executor get the same graph; ``delay`` seconds per answer stand for a
    remote model's latency. ``server.respond("chat/completions", CapitalisedExtractor(delay=0.5))``.
    """

    WORD = re.compile(r"\b[A-Z][a-z]{3,}\b")

    def __init__(self, *, delay: float = 0.0, max_entities: int = 6):
        self.delay = delay
        self.max_entities = max_entities

    def __call__(self, request: RecordedRequest) -> Reply:
        kind = request_kind(request)
        if kind == "entities":
            names = list(dict.fromkeys(self.WORD.findall(chunk_text(request))))[: self.max_entities]
            answer = {"entities": [{"name": n, "type": "concept", "description": f"{n} is mentioned.", "attributes": []} for n in names]}
        elif kind == "relations":
            listed = [line[2:] for line in prompt_message(request).split("\n") if line.startswith("- ")]
            answer = {"relations": [
                {"source": a, "target": b, "type": "related_to", "name": "related to", "description": f"{a} and {b}."}
                for a, b in zip(listed, listed[1:])
            ]}
        else:
            raise AssertionError(f"CapitalisedExtractor answers extraction only, not {kind}")
        body = chat_completion_body(json.dumps(answer), prompt_tokens=50, completion_tokens=20)
        return Reply(body=body, delay=self.delay)
