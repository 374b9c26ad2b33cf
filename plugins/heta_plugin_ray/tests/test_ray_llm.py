"""Language-model extraction on the ray executor: the workers ask the model (the real openai client against a
scripted server on 127.0.0.1), the driver caches their answers, and the graph is the local build's graph."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.runtime.recipe import ExecutorConfig
from heta_framework.testing.http import Reply, ScriptedServer
from heta_plugin_graph.steps import BuildGraph, DeduplicateEntities, DeduplicateRelations, ExtractEntities, ExtractRelations
from heta_plugin_graph.testing import CapitalisedExtractor, chunk_text, scripted_language_models

pytestmark = pytest.mark.slow
DOCUMENTS = Path(__file__).resolve().parents[3] / "examples" / "documents"
QUERIES = ("ocean currents", "coral reefs", "whales")
GRAPH_STATS = {"extract_entities": "entities_found", "extract_relations": "relations_found"}


def recipe(server: ScriptedServer, executor: ExecutorConfig | None) -> Recipe:
    # no embed_chunks: only the extraction fans out (the graph embeds its names on the driver), so the workers
    # are small processes without torch
    steps = [
        ParseDocuments(), SplitDocuments(), PersistChunks(),
        ExtractEntities(concurrency=4), ExtractRelations(concurrency=4), DeduplicateEntities(semantic=False),
        DeduplicateRelations(), BuildGraph(),
    ]
    return Recipe(models=scripted_language_models(server), steps=steps, executor=executor)


def build(path: Path, documents: Path, server: ScriptedServer, executor: ExecutorConfig | None, **kwargs) -> dict:
    registry = PluginRegistry.from_entry_points()
    with KnowledgeBase.create(path, recipe(server, executor), registry=registry) as kb:
        report = kb.sync.build([documents], **kwargs)
        stats = {s.name: s.stats for s in report.steps}
        return {
            "report": report, "stats": stats,
            "found": {step: stats[step][name] for step, name in GRAPH_STATS.items()},
            "rankings": {q: [r.id for r in kb.sync.query(q, mode="heta_graph_search", top_k=10).results] for q in QUERIES},
            "counts": kb.executor.counts(),
        }


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ocean")
    for article in sorted((DOCUMENTS / "ocean").glob("*.md"))[:6]:
        shutil.copy(article, folder / article.name)
    return folder


def test_llm_extraction_on_ray_builds_the_local_graph_and_the_executors_share_the_cache(tmp_path, documents, local_cluster):
    ray_executor = ExecutorConfig("ray", {"num_workers": 2, "num_cpus": 0.5})
    with ScriptedServer() as server:
        server.respond("chat/completions", CapitalisedExtractor())
        local = build(tmp_path / "local", documents, server, None)
        asked_locally = len(server.requests)
        on_ray = build(tmp_path / "ray", documents, server, ray_executor)
        asked_on_ray = len(server.requests) - asked_locally
        # the local build's folder rebuilt on ray: every answer comes from the cache the local build filled
        with KnowledgeBase(tmp_path / "local", recipe(server, ray_executor), PluginRegistry.from_entry_points()) as kb:
            rebuilt = {s.name: s.stats for s in kb.sync.build(rebuild=True).steps}
        asked_by_rebuild = len(server.requests) - asked_locally - asked_on_ray
    assert local["found"]["extract_entities"] > 20 and local["found"]["extract_relations"] > 10
    assert on_ray["found"] == local["found"]
    assert on_ray["rankings"] == local["rankings"] and any(on_ray["rankings"].values())
    # the workers asked the model, as many times as the local build did; the driver counted their calls
    assert asked_on_ray == asked_locally == local["stats"]["extract_entities"]["llm_calls"] + local["stats"]["extract_relations"]["llm_calls"]
    for step in GRAPH_STATS:
        assert on_ray["stats"][step]["llm_calls"] == local["stats"][step]["llm_calls"]
        assert on_ray["stats"][step]["executor_tasks"] >= 2
    # the extraction batches went to both workers
    assert len(on_ray["counts"]["workers"]) == 2 and on_ray["counts"]["failed"] == 0
    assert sum(on_ray["counts"]["workers"].values()) == on_ray["counts"]["tasks"]
    assert local["report"].issues == on_ray["report"].issues == []
    assert asked_by_rebuild == 0 and rebuilt["extract_entities"]["cache_hits"] == local["stats"]["extract_entities"]["llm_calls"]


def test_a_ray_rebuild_reuses_the_answers_and_failed_calls_leave_documents_pending(tmp_path, documents, local_cluster):
    ray_executor = ExecutorConfig("ray", {"num_workers": 2, "num_cpus": 0.5})
    refused = sorted(documents.glob("*.md"))[0].read_text().split("\n")[0].strip("# ")

    def extractor_refusing_one_document(request):
        if refused in chunk_text(request):
            return Reply(status=400, body={"error": {"message": "refused", "type": "invalid_request_error"}})
        return CapitalisedExtractor()(request)

    with ScriptedServer() as server:
        server.respond("chat/completions", extractor_refusing_one_document)
        first = build(tmp_path / "kb", documents, server, ray_executor)
        issues = [i for i in first["report"].issues if i.code == "llm_call_failed"]
        assert issues and first["found"]["extract_entities"] > 0  # the other documents' entities were kept
        asked_first = len(server.requests)

        server.respond("chat/completions", CapitalisedExtractor())  # the model answers everything now
        registry = PluginRegistry.from_entry_points()
        with KnowledgeBase(tmp_path / "kb", recipe(server, ray_executor), registry) as kb:
            second = kb.sync.build()  # a plain build: only the pending document runs again
        stats = {s.name: s.stats for s in second.steps}
    assert not [i for i in second.issues if i.code == "llm_call_failed"]
    asked_again = len(server.requests) - asked_first
    assert 0 < asked_again < asked_first  # only what failed was asked again: the rest came from the cache
    assert stats["extract_entities"]["llm_calls"] == len(issues)  # exactly the chunks that failed
