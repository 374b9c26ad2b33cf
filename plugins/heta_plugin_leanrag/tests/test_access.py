"""Access: core's leakage suite over ``lean_rag_query`` (offline recipe), every level_mode, aggregates rebuilt from what
a caller may read, and a language model that writes every member's name into the aggregates it names."""

from __future__ import annotations

import json
import shutil

import attrs
import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.testing.conformance import AccessLeakageSuite, build_leakage_kb
from heta_framework.testing.conformance.access import NAMING_QUERY, OUTSIDERS, PUBLIC_IDS, QUERIES, READER, leaked
from heta_framework.testing.http import RecordedRequest, Reply, ScriptedServer, chat_completion_body
from heta_plugin_leanrag import SemanticAggregation
from heta_plugin_leanrag.testing import MODE, hierarchy_of, is_aggregate_request, is_relation_request, schema_fields

from heta_plugin_graph import HetaGraphProcedure
from heta_plugin_vector import EmbedChunks, IndexVectors

EMBEDDING = EmbeddingModel(model_name="local/all-MiniLM-L6-v2")


def leanrag_recipe() -> Recipe:
    return Recipe(models=KnowledgeModels(embedding=EMBEDDING),
                  steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors(),
                         HetaGraphProcedure(extractor="nlp"), SemanticAggregation(cluster_size=6, relation_model_threshold=1)])


@pytest.fixture(scope="module")
def leak_path(tmp_path_factory, leanrag_registry):
    """The leakage suite's documents built offline once, closed."""
    path = tmp_path_factory.mktemp("leak") / "kb"
    build_leakage_kb(path, leanrag_recipe(), registry=leanrag_registry).close()
    return path


class TestLeanRagAccess(AccessLeakageSuite):
    """Every mode of the knowledge base (``lean_rag_query`` and the vector, SQL and graph modes beside it)."""

    @pytest.fixture(scope="class")
    @classmethod
    def leak_kb(cls, leak_path, leanrag_registry):
        kb = KnowledgeBase.load(leak_path, registry=leanrag_registry)
        yield kb
        kb.close()

    def test_every_level_mode_hides_the_restricted_documents(self, leak_kb):
        found = {}
        for level_mode in (0, 1, 2):
            for principals in OUTSIDERS:
                for text in (*QUERIES, "Qorvath plant", "Ilsabet Marrow"):
                    response = leak_kb.sync.query(text, mode=MODE, top_k=30, principals=principals, options={"level_mode": level_mode})
                    if text == QUERIES[0]:  # the shared subject: outsiders get the public part of it, not nothing
                        assert {d for r in response.results for d in r.metadata["document_ids"]} & set(PUBLIC_IDS), level_mode
                    if secrets := leaked(response, allowed=tuple(w.casefold() for w in text.split())):
                        found[(level_mode, principals, text)] = secrets
            named = leak_kb.sync.query(NAMING_QUERY[0], mode=MODE, top_k=30, options={"level_mode": level_mode})
            if secrets := leaked(named, allowed=(NAMING_QUERY[1],)):
                found[(level_mode, "naming")] = secrets
        assert not found

    def test_a_partly_readable_aggregate_is_rebuilt_for_an_outsider_and_whole_for_a_reader(self, leak_kb):
        stored = hierarchy_of(leak_kb)
        mixed = [a for a, r in stored["aggregates"].items()
                 if set(r["documents"]) & set(PUBLIC_IDS) and not set(r["documents"]) <= set(PUBLIC_IDS)]
        assert mixed, "the documents give aggregates resting on public and restricted documents"
        outsider = leak_kb.sync.query("Aurora Labs penicillin Leeds", mode=MODE, top_k=50, options={"level_mode": 0})
        shown = {r.id.removeprefix("aggregate:"): r for r in outsider.results if r.kind == "aggregate"}
        rebuilt = [shown[a] for a in mixed if a in shown]
        assert rebuilt and all(r.metadata["origin"] == "rebuilt" for r in rebuilt)
        assert all(set(r.metadata["document_ids"]) <= set(PUBLIC_IDS) for r in outsider.results)
        assert not [h for h in outsider.metadata["hits"] if h["id"].removeprefix("aggregate:") in mixed]  # not searched at level 0
        # matched at level 1 by what they say rebuilt (embedded for this query), not by their stored vectors
        by_aggregates = leak_kb.sync.query("Aurora Labs penicillin Leeds", mode=MODE, top_k=50, options={"level_mode": 1})
        matched = {h["id"].removeprefix("aggregate:") for h in by_aggregates.metadata["hits"]}
        assert matched & set(mixed)
        assert all(r.metadata["origin"] == "rebuilt" for r in by_aggregates.results if r.id.removeprefix("aggregate:") in mixed)
        assert not leaked(by_aggregates)
        reader = leak_kb.sync.query("Aurora Labs penicillin Leeds", mode=MODE, top_k=50, principals=[READER], options={"level_mode": 0})
        whole = [r for r in reader.results if r.kind == "aggregate" and r.id.removeprefix("aggregate:") in mixed]
        assert whole and all(r.metadata["origin"] == "extractive" for r in whole)


class EchoingAggregationModel:
    """Names every aggregate after all of its members and describes it with its whole prompt; answers with what it was
    shown. Whatever reached a prompt from a restricted document is then in the stored aggregates, and in any answer."""

    def __call__(self, request: RecordedRequest) -> Reply:
        shown = " ".join(str(m.get("content", "")) for m in request.json["messages"] if m["role"] == "user")
        if is_aggregate_request(request):
            members = [line[2:].split(": ", 1)[0] for line in shown.split("\n") if line.startswith("- ")]
            value: dict = {"name": "Group of " + ", ".join(members)[:140], "description": shown, "findings": []}
        elif is_relation_request(request):
            value = {"description": shown}
        elif "citations" in schema_fields(request):  # the grounded answer core writes from the results
            value = {"answer": shown, "sufficient": True, "citations": [1]}
        else:
            value = {"answer": shown}
        return Reply(body=chat_completion_body(json.dumps(value)))


class TestLeanRagAccessWithALanguageModel(AccessLeakageSuite):
    """The same documents, the aggregates and their relations written by a model that repeats its prompt, and every
    query answered (``answer=True``) from the results: an outsider must see none of it. Only ``lean_rag_query``:
    the other modes are checked beside it above."""

    mode_options = {MODE: {"answer": True}}

    def modes(self, kb):
        return [MODE]

    @pytest.fixture(scope="class")
    @classmethod
    def leak_kb(cls, leak_path, leanrag_registry, tmp_path_factory):
        path = tmp_path_factory.mktemp("leak-llm") / "kb"
        shutil.copytree(leak_path, path)
        with ScriptedServer() as server:
            server.respond("chat/completions", EchoingAggregationModel())
            models = KnowledgeModels(embedding=EMBEDDING, language=LanguageModel(
                model_name="openai/echo", base_url=server.base_url, api_key="sk-test-echo", options={"max_attempts": 1, "timeout": 10}))
            kb = KnowledgeBase(path, attrs.evolve(leanrag_recipe(), models=models), leanrag_registry)
            assert kb.sync.build(rebuild=True).issues == []
            yield kb
            kb.close()

    def test_the_model_wrote_the_restricted_names_into_the_stored_aggregates(self, leak_kb):
        stored = hierarchy_of(leak_kb)
        assert {r["origin"] for r in stored["aggregates"].values()} == {"language_model"}
        assert leaked_text(json.dumps(stored))  # so the suite's checks above have something to catch


def leaked_text(text: str) -> bool:
    return "qorvath" in text.casefold() or "zephyrine" in text.casefold()
