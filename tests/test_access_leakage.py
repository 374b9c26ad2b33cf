"""The leakage suite over every first-party mode on the embedded stores: FAISS, Whoosh, SQLite, the nlp graph,
GraphRAG's extractive reports, LightRAG and memory_search, with the local MiniLM model; no network."""

from __future__ import annotations

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeModels, Recipe
from heta_framework.testing.conformance import AccessLeakageSuite, build_leakage_kb

pytestmark = pytest.mark.slow


def every_offline_mode_recipe() -> Recipe:
    from heta_plugin_fulltext import IndexFullText
    from heta_plugin_graphrag import CommunityReports, DetectCommunities

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors(), IndexFullText(),
               HetaGraphProcedure(extractor="nlp"), DetectCommunities(), CommunityReports()],
    )


class TestEveryOfflineMode(AccessLeakageSuite):
    @pytest.fixture(scope="class")
    @classmethod
    def leak_kb(cls, tmp_path_factory):
        kb = build_leakage_kb(tmp_path_factory.mktemp("leak") / "kb", every_offline_mode_recipe())
        yield kb
        kb.close()

    def test_the_recipe_builds_every_offline_mode(self, leak_kb):
        expected = {"vector_search", "full_text_search", "sql_text_search", "heta_graph_search", "hybrid_search", "heta_rerank_search",
                    "graphrag_global_search", "graphrag_local_search", "lightrag_local", "lightrag_global", "lightrag_hybrid",
                    "lightrag_mix", "memory_search"}
        assert expected <= set(self.modes(leak_kb))
