"""heta_framework.kb.retrieval: what the LangChain, LlamaIndex and Haystack retrievers share."""

from __future__ import annotations

import logging
import threading

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.kb.retrieval import (
    KnowledgeBaseSource,
    QuerySettings,
    origin_document_id,
    query_async,
    query_blocking,
    result_metadata,
)
from heta_framework.kb.search import QueryResponse, QueryResult, query_issue


@pytest.fixture
def kb_path(tmp_path):
    path = tmp_path / "kb"
    with KnowledgeBase.create(path, Recipe(steps=[ParseDocuments(), SplitDocuments(), PersistChunks()])) as kb:
        kb.sync.build([SourceDocument(text="Whales are marine mammals that breathe air.", id="whales", metadata={"topic": "ocean"})])
    return path


def test_settings_override_only_what_is_given():
    settings = QuerySettings(mode="sql_text_search", top_k=5, filters={"topic": "ocean"})
    assert settings.override(top_k=None, filters=None) is settings
    changed = settings.override(top_k=2, options={"answer": False})
    assert changed.query_arguments() == {"mode": "sql_text_search", "top_k": 2, "filters": {"topic": "ocean"}, "options": {"answer": False},
                                         "principals": []}
    assert changed.override(principals=["group:hr"]).query_arguments()["principals"] == ["group:hr"]


def test_metadata_is_flat_provenance_plus_score_mode_and_evidence():
    provenance = {"document_id": "whales", "source": "w.md", "start": 0, "end": 19, "chunk_index": 0}
    chunk = QueryResult(id="whales-0", text="Whales breathe air.", score=0.4, metadata=provenance)
    fact = QueryResult(id="entity:whale", text="whale", score=0.9, kind="entity", evidence=(chunk,), sources=("heta_graph_search", "hybrid_search"))
    response = QueryResponse(results=[fact, chunk], metadata={"mode": "hybrid_search"})
    metadata = result_metadata(fact, response)
    assert metadata == {
        "id": "entity:whale",
        "score": 0.9,
        "mode": "hybrid_search",
        "kind": "entity",
        "found_by": ["heta_graph_search", "hybrid_search"],
        "evidence": [{"id": "whales-0", "document_id": "whales", "source": "w.md", "start": 0, "end": 19}],
    }
    assert result_metadata(chunk, response)["document_id"] == "whales"
    assert "evidence" not in result_metadata(chunk, response)
    assert origin_document_id(fact) == "whales" and origin_document_id(chunk) == "whales"
    assert origin_document_id(QueryResult(id="x", text="x", score=0.0)) is None


def test_a_path_is_opened_once_across_threads_and_closed_by_its_source(kb_path):
    source = KnowledgeBaseSource(kb_path)
    opened: list[KnowledgeBase] = []
    threads = [threading.Thread(target=lambda: opened.append(source.get())) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(kb) for kb in opened}) == 1
    response = query_blocking(source, "whales", QuerySettings())
    assert [r.document_id for r in response.results] == ["whales"]
    source.close()
    assert source.get() is not opened[0]  # reopened after close
    source.close()


async def test_a_given_knowledge_base_is_used_and_left_open(kb_path):
    kb = KnowledgeBase.load(kb_path)
    source = KnowledgeBaseSource(kb)
    response = await query_async(source, "marine mammals", QuerySettings(mode="sql_text_search", filters={"topic": "ocean"}))
    assert response.metadata["mode"] == "sql_text_search" and response.results[0].document_id == "whales"
    source.close()
    assert source.get() is kb
    assert (await kb.query("whales", mode="sql_text_search")).results
    kb.close()
    with pytest.raises(TypeError, match="KnowledgeBase or the path"):
        KnowledgeBaseSource(42)


def test_query_issues_are_logged(caplog):
    from heta_framework.kb.retrieval import _log_issues

    response = QueryResponse(metadata={"issues": [query_issue("reranker_failed", "the reranker timed out", "kept the fused order")]})
    with caplog.at_level(logging.WARNING, logger="heta_framework.kb.retrieval"):
        _log_issues(response)
    assert "reranker_failed" in caplog.text and "kept the fused order" in caplog.text
