"""The composed modes pass the query-engine suite on one small real knowledge base.

hybrid_search, heta_rerank_search, heta_rewrite_search, heta_multihop_search and heta-server's
memory_search each run
core's ``QueryEngineSuite`` (known query first, top_k, filters exact and as a list, hostile and
CJK text, traces, reopening, concurrent queries) over real FAISS vectors from the local MiniLM
model, a Whoosh index and a Heta graph (offline "nlp" extractor). The language model is the real
openai client and the reranker the real cohere client, both talking HTTP to a scripted server on
127.0.0.1 that plays the services: the reranker scores documents by the query words they share,
and the language model answers each prompt from what the prompt itself holds (the query's key
words as rewrites; the first numbered result as the useful evidence and the answer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel, RerankModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing import make_registry
from heta_framework.testing.conformance import QueryEngineSuite
from heta_framework.testing.http import RecordedRequest, ScriptedServer, chat_completion_body, last_user_message, rerank_body

pytestmark = pytest.mark.slow

DOCUMENTS = [
    SourceDocument(id="fox", name="fox.txt", text="The quick brown fox jumps over the lazy dog. Foxes live in dens in the forest."),
    SourceDocument(id="whales", name="whales.md", text="# Whales\n\nWhales are marine mammals. They breathe air through a blowhole."),
    SourceDocument(id="ocean", name="ocean.txt", text="The Pacific Ocean is the largest ocean on Earth. Blue whales feed on krill there."),
    SourceDocument(id="shanghai", name="shanghai.txt", text="上海市是中国的直辖市之一。长江在上海附近入海。"),
]
KNOWN_QUERY = ("marine mammals that breathe through a blowhole", "whales")


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if len(w) > 3}


def rerank_by_overlap(request: RecordedRequest) -> dict[str, Any]:
    """A reranking service in miniature: documents sharing more query words rank higher (ties: input order)."""
    query, documents, top_n = request.json["query"], request.json["documents"], request.json["top_n"]
    scores = [(i, len(_words(query) & _words(d)) / (1 + len(_words(query)))) for i, d in enumerate(documents)]
    return rerank_body(sorted(scores, key=lambda s: (-s[1], s[0]))[:top_n])


def answer_from_the_prompt(request: RecordedRequest) -> dict[str, Any]:
    """A language model in miniature, for the prompts the composed modes send."""
    system = request.json["messages"][0]["content"]
    user = last_user_message(request)
    if system.startswith("You rewrite search queries"):
        key_words = " ".join(sorted(_words(user))) or user
        reply: dict[str, Any] = {"queries": [key_words, f"{user} facts"]}
    elif system.startswith("You help answer a question"):  # multihop: which numbered results help
        found = re.search(r"\[1\][^\n]*", user)
        reply = {"useful": [1], "information": found.group(0)} if found else {"useful": [], "information": ""}
    elif system.startswith("Decide whether the numbered evidence"):
        has_evidence = "[1]" in user
        reply = {"sufficient": has_evidence, "answer": "As the evidence says [1]." if has_evidence else "", "next_query": ""}
    else:  # the final answer after the last round
        reply = {"answer": "The evidence does not say."}
    return chat_completion_body(json.dumps(reply))


@pytest.fixture(scope="module")
def services() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        server.respond("chat/completions", answer_from_the_prompt)
        server.respond("/v2/rerank", rerank_by_overlap)
        yield server


@pytest.fixture(scope="module")
def composed_registry() -> PluginRegistry:
    import heta_plugin_fulltext
    import heta_plugin_local
    import heta_plugin_openai
    import heta_server

    import heta_plugin_graph
    import heta_plugin_rerank
    import heta_plugin_vector

    return make_registry(
        heta_plugin_vector, heta_plugin_fulltext, heta_plugin_graph, heta_plugin_local, heta_plugin_openai, heta_plugin_rerank, heta_server
    )


@pytest.fixture(scope="module")
def composed_kb_path(tmp_path_factory, composed_registry, services) -> Path:
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    fast = {"max_attempts": 1, "timeout": 10}
    models = KnowledgeModels(
        embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2"),
        language=LanguageModel(model_name="openai/scripted", base_url=services.base_url, api_key="sk-test-composed-1", options=fast),
        reranker=RerankModel(model_name="cohere/rerank-v3.5", base_url=services.url, api_key="co-test-composed-1", options=fast),
    )
    recipe = Recipe(
        models=models,
        steps=[
            ParseDocuments(),
            SplitDocuments(chunk_size=60, chunk_overlap=0),
            PersistChunks(),
            EmbedChunks(),
            IndexVectors(),
            IndexFullText(),
            HetaGraphProcedure(extractor="nlp"),
        ],
    )
    path = tmp_path_factory.mktemp("composed") / "kb"
    with KnowledgeBase.create(path, recipe, registry=composed_registry) as kb:
        report = kb.sync.build(DOCUMENTS)
        assert report.document_count == len(DOCUMENTS)
        assert {"hybrid_search", "fusion_search", "heta_rerank_search", "heta_rewrite_search", "heta_multihop_search"} <= set(kb.available_queries)
    return path


class ComposedModeSuite(QueryEngineSuite):
    known_query = KNOWN_QUERY

    @pytest.fixture
    def registry(self, composed_registry):
        return composed_registry

    @pytest.fixture
    def engine(self, registry):
        return registry.query_engine(self.mode)

    @pytest.fixture
    def knowledge_base_path(self, composed_kb_path):
        return composed_kb_path


class TestHybridSearch(ComposedModeSuite):
    mode = "hybrid_search"


class TestFusionSearch(ComposedModeSuite):
    mode = "fusion_search"


class TestRerankSearch(ComposedModeSuite):
    mode = "heta_rerank_search"

    def test_the_reranker_ranked(self, kb, services):
        response = self.query(kb, KNOWN_QUERY[0], top_k=3)
        assert response.metadata["ranking"] == "reranker"  # the scripted reranker answered, no fallback to RRF
        assert services.requests_to("/v2/rerank")


class TestRewriteSearch(ComposedModeSuite):
    mode = "heta_rewrite_search"

    def test_the_variants_were_searched(self, kb):
        response = self.query(kb, KNOWN_QUERY[0], top_k=3, trace=True)
        assert not response.issues
        searched = [child.to_dict()["text"] for child in response.trace.children]
        assert "blowhole breathe mammals marine that through" in searched


class TestMultihopSearch(ComposedModeSuite):
    mode = "heta_multihop_search"

    def test_the_answer_cites_the_first_result(self, kb):
        response = self.query(kb, KNOWN_QUERY[0], top_k=3)
        assert response.answer == "As the evidence says [1]."
        assert response.citations and response.citations[0].result_id == response.results[0].id


class TestMemorySearch(ComposedModeSuite):
    mode = "memory_search"

    def query(self, kb, text, **options):
        # recall marks what it returned as just accessed, which moves recency for the next query; the suite
        # compares rankings across queries, so it asks with access updates off (their own tests cover them)
        return kb.sync.query(text, mode=self.mode, options={"update_access": False}, **options)

    def test_every_leg_recalled(self, kb):
        response = self.query(kb, KNOWN_QUERY[0], top_k=3, trace=True)
        assert {child.to_dict()["mode"] for child in response.trace.children} == {"vector_search", "full_text_search", "heta_graph_search"}
        assert response.metadata["ranking"] == "reranker"
