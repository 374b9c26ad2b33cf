"""Fusion weights calibrated on a real knowledge base: once per build, kept in its folder, explicit weights win.

examples/documents (48 articles and a Word file), local MiniLM, FAISS, Whoosh and an nlp graph.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from heta_framework.builtin.engines.calibration import CACHE_FILE, PSEUDO_QUERIES, TOLERANCE
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.plugins.registry import PluginRegistry

DOCUMENTS = Path(__file__).resolve().parent.parent / "examples" / "documents"
QUESTION = "Who discovered penicillin?"

pytestmark = pytest.mark.slow


def recipe() -> Recipe:
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[
            ParseDocuments(), SplitDocuments(), EmbedChunks(), IndexVectors(), IndexFullText(),
            HetaGraphProcedure(extractor="nlp", embed_descriptions=False),
        ],
    )


def counting_embeddings(kb, monkeypatch) -> list[list[str]]:
    client = kb.get_component("models.embedding")
    calls: list[list[str]] = []
    real = client.embed

    async def counted(texts):
        calls.append(list(texts))
        return await real(texts)

    monkeypatch.setattr(client, "embed", counted)
    return calls


async def test_calibrated_once_per_build_and_kept_in_the_folder(tmp_path, monkeypatch):
    registry = PluginRegistry.from_entry_points(strict=True)
    kb = KnowledgeBase.create(tmp_path / "kb", recipe(), registry=registry)
    await kb.build([DOCUMENTS])

    calls = counting_embeddings(kb, monkeypatch)
    response = await kb.query(QUESTION, mode="heta_rerank_search", top_k=5, trace=True)
    fusion = response.metadata["fusion"]
    assert fusion["weights_origin"] == "calibrated"
    calibration = fusion["calibration"]
    assert calibration["pseudo_queries"] == PSEUDO_QUERIES
    assert set(calibration["leg_mrr"]) == {"hybrid_search", "full_text_search"}
    assert fusion["weights"] == calibration["weights"] and max(fusion["weights"].values()) == 1.0
    # the grid holds equal weights, so the chosen pair is never worse than plain RRF on the pseudo-queries by
    # more than the tolerance (a tie within it may go to the lighter lexical weight)
    assert calibration["fused_mrr"] >= calibration["equal_weights_mrr"] - TOLERANCE
    # English text and an English model: the keyword list may only tilt the weights, never drop the dense one
    assert calibration["weight_range"].startswith("bounded")
    assert min(fusion["weights"].values()) >= 0.5
    # a document that answers it comes first: Fleming's article or penicillin's (their fused scores are
    # within 1% of each other, so which one leads may change between builds)
    assert response.results[0].metadata["name"] in {"alexander-fleming.md", "penicillin.md"}
    # the user's query embedded once; each pseudo-query once per calibration (hybrid_search's own, then
    # heta_rerank_search's, whose hybrid leg embeds it again; the vector and graph legs share one embedding)
    assert len(calls) == 1 + 2 * PSEUDO_QUERIES
    # the caller's trace shows its own query only, not the calibration's
    assert {c.mode for c in response.trace.children} == {"hybrid_search", "full_text_search"}

    stored = json.loads((tmp_path / "kb" / CACHE_FILE).read_text())
    assert set(stored["modes"]) == {"hybrid_search", "heta_rerank_search"}
    assert stored["modes"]["heta_rerank_search"]["weights"] == fusion["weights"]

    # another process (here: another KnowledgeBase object) reads the stored calibration instead of redoing it
    reopened = KnowledgeBase.load(tmp_path / "kb", registry=registry)
    calls = counting_embeddings(reopened, monkeypatch)
    again = await reopened.query(QUESTION, mode="heta_rerank_search", top_k=5)
    assert again.metadata["fusion"]["weights"] == fusion["weights"]
    assert len(calls) == 1

    explicit = await reopened.query(QUESTION, mode="hybrid_search", options={"hybrid_weights": {"vector_search": 2.0}})
    assert explicit.metadata["fusion"]["weights_origin"] == "explicit"
    assert explicit.metadata["fusion"]["weights"] == {"vector_search": 2.0, "heta_graph_search": 1.0}
    assert "calibration" not in explicit.metadata["fusion"]
