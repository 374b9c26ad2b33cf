"""The leakage suite over every first-party mode on the embedded stores: FAISS, Whoosh, SQLite, the nlp graph,
GraphRAG's extractive reports, LightRAG, HiRAG, LeanRAG and memory_search, with the local MiniLM model; then the same knowledge
base with a scripted language model that echoes its prompt, so the modes that ask a model (rewrite, multihop,
answers) show whatever reached it. No network."""

from __future__ import annotations

import json

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.testing.conformance import AccessLeakageSuite, build_leakage_kb
from heta_framework.testing.http import RecordedRequest, Reply, ScriptedServer, chat_completion_body, last_user_message

pytestmark = pytest.mark.slow


def every_offline_mode_recipe() -> Recipe:
    from heta_plugin_fulltext import IndexFullText
    from heta_plugin_graphrag import CommunityReports, DetectCommunities
    from heta_plugin_hirag import HierarchicalAggregation, HiRagBridges, HiRagCommunity
    from heta_plugin_leanrag import SemanticAggregation

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors(), IndexFullText(),
               HetaGraphProcedure(extractor="nlp"), DetectCommunities(), CommunityReports(),
               HierarchicalAggregation(), HiRagCommunity(), HiRagBridges(), SemanticAggregation()],
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
                    "lightrag_mix", "memory_search", "hi_rag_query", "hi_rag_nobridge_query", "hi_rag_local_query",
                    "hi_rag_global_query", "hi_rag_bridge_query", "lean_rag_query"}
        assert expected <= set(self.modes(leak_kb))


class EchoingModel:
    """A scripted language model that answers with everything it was shown: whatever reached its prompt from a
    document the caller may not read then shows in the answer, where the suite finds it."""

    def __call__(self, request: RecordedRequest) -> Reply:
        shown = " ".join(str(m.get("content", "")) for m in request.json["messages"] if m["role"] == "user")
        schema = ((request.json.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        fields = set(schema.get("properties", {}))
        if not fields:  # plain text (GraphRAG's answer over its reports)
            return Reply(body=chat_completion_body(shown))
        if "queries" in fields:  # heta_rewrite_search
            answer: dict = {"queries": [last_user_message(request)]}
        elif "high_level_keywords" in fields:  # LightRAG's keywords
            answer = {"high_level_keywords": [last_user_message(request)], "low_level_keywords": [last_user_message(request)]}
        elif "useful" in fields:  # multihop: what the results say
            answer = {"useful": [1], "information": shown}
        elif "next_query" in fields:  # multihop: the judge
            answer = {"sufficient": True, "answer": shown, "next_query": ""}
        elif "citations" in fields:  # a grounded answer
            answer = {"answer": shown, "sufficient": True, "citations": [1]}
        else:
            answer = {"answer": shown}
        return Reply(body=chat_completion_body(json.dumps(answer)))


class TestModesWithALanguageModel(AccessLeakageSuite):
    """The same knowledge base opened with a language model: heta_rewrite_search, heta_multihop_search, LightRAG's
    model keywords and GraphRAG's answer become available, and every mode answers (``answer=True``) from what it found."""

    @pytest.fixture(scope="class")
    @classmethod
    def leak_kb(cls, tmp_path_factory):
        path = tmp_path_factory.mktemp("leak-llm") / "kb"
        build_leakage_kb(path, every_offline_mode_recipe()).close()
        with ScriptedServer() as server:
            server.respond("chat/completions", EchoingModel())
            models = KnowledgeModels(
                embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2"),
                language=LanguageModel(model_name="openai/echo", base_url=server.base_url, api_key="sk-test-echo",
                                       options={"max_attempts": 1, "timeout": 10}),
            )
            kb = KnowledgeBase.load(path, models=models)
            yield kb
            kb.close()

    #: the tool-calling modes need a model that calls tools, which this echo does not: heta-plugin-wiki runs this
    #: suite over them with a scripted model that searches, reads and cites whatever it was shown
    skip_modes = frozenset({"agent_search", "wiki_agent_search"})

    def ask(self, kb, text, mode, principals, top_k=10):
        options = {"answer": True, **({"llm_answer": True} if mode == "graphrag_global_search" else {})}
        return kb.sync.query(text, mode=mode, top_k=top_k, trace=True, principals=principals, options=options)

    def test_the_language_model_modes_are_checked(self, leak_kb):
        assert {"heta_rewrite_search", "heta_multihop_search"} <= set(self.modes(leak_kb))
        answered = self.ask(leak_kb, "penicillin production", "heta_multihop_search", None)
        assert answered.answer and "penicillin" in answered.answer.casefold()  # the echo really answers
