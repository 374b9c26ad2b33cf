"""Composed modes embed the query once per request, with the same rankings as embedding it in every base mode.

A real knowledge base (examples/documents, local MiniLM, FAISS, Whoosh, an nlp
graph); the embedding client is wrapped to count the model calls it really makes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.kb.query_memo import QueryMemo
from heta_framework.plugins.registry import PluginRegistry

DOCUMENTS = Path(__file__).resolve().parent.parent / "examples" / "documents"
QUESTIONS = ("Who discovered penicillin?", "How do whales communicate?", "What powers a steam engine?")

pytestmark = pytest.mark.slow


def recipe() -> Recipe:
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[ParseDocuments(), SplitDocuments(), EmbedChunks(), IndexVectors(), IndexFullText(), HetaGraphProcedure(extractor="nlp")],
    )


def ranking(response) -> list[tuple[str, float, tuple[str, ...]]]:
    return [(r.id, round(r.score, 6), tuple(e.id for e in r.evidence)) for r in response.results]


async def every_ranking(kb) -> dict[tuple[str, str], list]:
    return {
        (mode, question): ranking(await kb.query(question, mode=mode, top_k=8))
        for mode in ("vector_search", "heta_graph_search", "hybrid_search", "heta_rerank_search")
        for question in QUESTIONS
    }


async def test_composed_modes_embed_once_and_rank_as_before(tmp_path, monkeypatch):
    kb = KnowledgeBase.create(tmp_path / "kb", recipe(), registry=PluginRegistry.from_entry_points(strict=True))
    await kb.build([DOCUMENTS])
    client = kb.get_component("models.embedding")
    calls: list[list[str]] = []
    real_embed = client.embed

    async def counted_embed(texts):
        calls.append(list(texts))
        return await real_embed(texts)

    # the first composed query calibrates the fusion weights on pseudo-queries (embedding each once);
    # it happens once per build, so it is done before counting
    await kb.query(QUESTIONS[0], mode="heta_rerank_search", top_k=5)
    monkeypatch.setattr(client, "embed", counted_embed)

    for mode in ("hybrid_search", "heta_rerank_search"):
        calls.clear()
        # equal weights: calibration may weigh a leg 0 on some machines' vectors, and a 0-weight leg is not run
        response = await kb.query(QUESTIONS[0], mode=mode, top_k=5, trace=True,
                                  options={"hybrid_weights": {"vector_search": 1.0, "heta_graph_search": 1.0}})
        assert calls == [[QUESTIONS[0]]], mode
        # the query really did go through both embedding modes
        modes = {child.mode for node in [response.trace, *response.trace.children] for child in node.children}
        assert {"vector_search", "heta_graph_search"} <= modes
    calls.clear()
    await kb.query(QUESTIONS[1], mode="vector_search")
    await kb.query(QUESTIONS[1], mode="vector_search")
    assert len(calls) == 2  # the memo is per request: nothing is cached across queries

    memoised = await every_ranking(kb)

    async def embed_every_time(self, client, text):  # the behaviour before the memo: each mode asks the model
        return (await client.embed([text]))[0]

    monkeypatch.setattr(QueryMemo, "embed", embed_every_time)
    calls.clear()
    await kb.query(QUESTIONS[0], mode="hybrid_search", top_k=5,
                   options={"hybrid_weights": {"vector_search": 1.0, "heta_graph_search": 1.0}})
    assert len(calls) == 2  # both legs ask the model
    assert await every_ranking(kb) == memoised
    kb.close()


async def test_neighbour_filter_on_the_record_id_finds_what_the_metadata_filter_found(tmp_path):
    kb = KnowledgeBase.create(tmp_path / "kb", recipe(), registry=PluginRegistry.from_entry_points(strict=True))
    await kb.build([DOCUMENTS])
    entities = kb.get_component("stores.vector").collection("graph_entities")
    query = np.asarray(await kb.get_component("models.embedding").embed(["penicillin mould"]), dtype=np.float32)
    every = entities.search(query, 200)[0]
    wanted = [hit.id for hit in every[5:40:3]]
    by_id = entities.search(query, len(wanted), filters={"id": wanted})[0]
    by_metadata = entities.search(query, len(wanted), filters={"entity_id": wanted})[0]
    assert [(h.id, round(h.score, 6)) for h in by_id] == [(h.id, round(h.score, 6)) for h in by_metadata]
    assert {h.id for h in by_id} == set(wanted)
    kb.close()
