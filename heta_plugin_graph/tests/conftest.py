from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from heta_framework.testing import import_installed

for _name in ("heta_plugin_graph", "heta_plugin_vector"):
    import_installed(_name)

import heta_plugin_local
import heta_plugin_openai
import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.kb import KnowledgeModels
from heta_framework.testing import make_registry
from heta_framework.testing.http import ScriptedServer, chat_completion_body
from heta_plugin_graph.normalize import normalize_name
from heta_plugin_graph.testing import chunk_text, prompt_message, request_kind
from heta_plugin_local import create_client

import heta_plugin_graph
import heta_plugin_vector
from heta_plugin_vector import EmbedChunks, IndexVectors

MODEL = "local/all-MiniLM-L6-v2"


@pytest.fixture(scope="session")
def local_model():
    """Load the MiniLM weights once per session (loaded models are shared per process)."""
    client = create_client(EmbeddingModel(model_name=MODEL))
    client.model()
    return client


@pytest.fixture
def registry(local_model):
    return make_registry(heta_plugin_vector, heta_plugin_local, heta_plugin_graph, heta_plugin_openai)


@pytest.fixture
def base_steps():
    return [ParseDocuments(), SplitDocuments(chunk_size=60, chunk_overlap=0), PersistChunks(), EmbedChunks(), IndexVectors()]


@pytest.fixture
def embedding_only():
    return KnowledgeModels(embedding=EmbeddingModel(model_name=MODEL))


@pytest.fixture
def server():
    with ScriptedServer() as scripted:
        yield scripted


def llm_models(server: ScriptedServer, **options: Any) -> KnowledgeModels:
    """The real openai client against the scripted server, retrying 429/5xx/time-outs quickly."""
    return KnowledgeModels(
        language=LanguageModel(
            model_name="openai/test-model", base_url=server.base_url, api_key="sk-test",
            options={"max_attempts": 3, "retry_initial_delay": 0.01, "retry_max_delay": 0.05, "concurrency": 64, **options},
        ),
        embedding=EmbeddingModel(model_name=MODEL),
    )


class World:
    """A scripted language model that knows a small vocabulary.

    entities: name -> type; an entity is returned for a chunk that contains its name.
    relations: (source, target, type); returned when both names are listed entities.
    Dedup groups are merged when ``same(a, b)``; stored matches likewise.
    """

    def __init__(self, entities: Mapping[str, str], relations=(), same: Callable[[str, str], bool] | None = None):
        self.entities = dict(entities)
        self.relations = list(relations)
        self.same = same or (lambda a, b: normalize_name(a).replace(" inc", "") == normalize_name(b).replace(" inc", ""))

    def __call__(self, request):
        kind = request_kind(request)
        text = prompt_message(request)
        if kind == "entities":
            chunk = chunk_text(request)
            found = [
                {"name": name, "type": type_, "description": f"{name} is mentioned here.", "attributes": []}
                for name, type_ in self.entities.items() if name in chunk
            ]
            return chat_completion_body(json.dumps({"entities": found}, ensure_ascii=False), prompt_tokens=50, completion_tokens=20)
        if kind == "relations":
            listed = [line[2:] for line in text.split("\n") if line.startswith("- ")]
            found = [
                {"source": s, "target": t, "type": ty, "name": ty.replace("_", " "), "description": f"{s} {ty} {t}."}
                for s, t, ty in self.relations if s in listed and t in listed
            ]
            return chat_completion_body(json.dumps({"relations": found}, ensure_ascii=False), prompt_tokens=60, completion_tokens=20)
        if kind == "groups":
            answers = []
            for block in text.split("Group ")[1:]:
                group_id = block.split(":", 1)[0]
                names = [line.split(". ", 1)[1].split(" [", 1)[0] for line in block.split("\n")[1:] if ". " in line]
                clusters: list[list[int]] = []
                for number, name in enumerate(names, start=1):
                    home = next((c for c in clusters if self.same(names[c[0] - 1], name)), None)
                    home.append(number) if home is not None else clusters.append([number])
                answers.append({"group": group_id, "clusters": clusters})
            return chat_completion_body(json.dumps({"groups": answers}))
        if kind == "decisions":
            decisions = []
            for block in text.split("Item ")[1:]:
                item_id = block.split(":", 1)[0]
                new_name = block.split("NEW ", 1)[1].split(" [", 1)[0]
                candidates = [line.strip().split(". ", 1)[1].split(" [", 1)[0] for line in block.split("\n")[1:] if ". " in line]
                match = next((i for i, c in enumerate(candidates, start=1) if self.same(c, new_name)), 0)
                decisions.append({"item": item_id, "match": match})
            return chat_completion_body(json.dumps({"decisions": decisions}))
        raise AssertionError(f"unexpected request kind {kind}")


@pytest.fixture
def world_factory():
    """``World(entities, relations, same)``: a scripted language model to pass to ``server.respond``."""
    return World


@pytest.fixture
def make_models():
    """``make_models(server, **openai_options)``: KnowledgeModels with the openai client on ``server``."""
    return llm_models


@pytest.fixture
def kind_of():
    """``kind_of(request)``: entities | relations | groups | decisions."""
    return request_kind


@pytest.fixture
def text_of():
    """``text_of(request)``: the chunk text of an extraction request."""
    return chunk_text
