"""EmbedChunks keeps up to ``concurrency`` batches in flight against an OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import sqlite3

import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing.http import Reply, embeddings_body

DELAY = 0.2  # seconds the server takes per request


def documents() -> list[SourceDocument]:
    return [SourceDocument(id=f"d{n}", name=f"d{n}.txt", text=f"Document {n} is about topic number {n * 7}.") for n in range(12)]


def recipe(server, concurrency: int) -> Recipe:
    from heta_plugin_vector import EmbedChunks

    model = EmbeddingModel(model_name="openai/test-embedding", base_url=server.base_url, api_key="sk-test-key", options={"timeout": 5})
    return Recipe(models=KnowledgeModels(embedding=model),
                  steps=[ParseDocuments(), SplitDocuments(), EmbedChunks(batch_size=2, concurrency=concurrency)])


@pytest.mark.parametrize("concurrency", [1, 3, 16])
async def test_batches_in_flight_follow_the_bound_and_every_vector_is_cached(tmp_path, server, concurrency):
    server.respond("embeddings", lambda request: Reply(
        body=embeddings_body([[float(len(text)), 1.0, 0.5] for text in request.json["input"]]), delay=DELAY))
    kb = KnowledgeBase.create(tmp_path / "kb", recipe(server, concurrency), registry=PluginRegistry.from_entry_points(strict=True))
    report = await kb.build(documents())
    kb.close()
    step = next(s for s in report.steps if s.name == "embed_chunks")
    assert step.stats["embedding_calls"] == 6 and step.stats["embedded_texts"] == 12
    assert server.max_in_flight == min(concurrency, 6)  # 12 chunks in batches of 2: six requests at most
    with sqlite3.connect(tmp_path / "kb" / "embeddings" / "cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 12  # the folder state's embeddings cache
    server.check()
