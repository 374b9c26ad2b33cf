"""``QueryEngineSuite``: what every query engine (a query mode) must do inside a real knowledge base.

The subclass builds a knowledge base with its plugin and names a query that has
a known best document; the suite opens that folder itself and queries it
through ``kb.sync`` (one background loop, so it works whatever loop built it)::

    class TestTitleSearch(QueryEngineSuite):
        mode = "title_search"
        known_query = ("whale feeding", "whale")      # (query text, document id of the best hit)

        @pytest.fixture
        def engine(self):
            return TitleSearchEngine()

        @pytest.fixture
        def registry(self):
            return make_registry(my_plugin)

        @pytest.fixture
        def knowledge_base_path(self, tmp_path, registry):
            with KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry) as kb:
                kb.sync.build(documents)
            return tmp_path / "kb"
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heta_framework.contracts.search import QueryEngineProtocol, QueryResponse, SearchAssetRef
from heta_framework.kb.knowledge_base import KnowledgeBase
from heta_framework.testing.conformance.base import run_in_threads
from heta_framework.testing.conformance.samples import HOSTILE_STRINGS, UNICODE_TEXTS


class QueryEngineSuite:
    #: the mode under test, as users pass it to ``kb.query(mode=...)``
    mode: str = ""
    #: ``(query text, document id)``: a query whose best hit comes from that document
    known_query: tuple[str, str] = ("", "")

    @pytest.fixture
    def engine(self) -> QueryEngineProtocol:
        raise NotImplementedError("provide an `engine` fixture: the query engine instance your plugin registers")

    @pytest.fixture
    def registry(self) -> Any:
        raise NotImplementedError("provide a `registry` fixture: heta_framework.testing.make_registry(your_plugin)")

    @pytest.fixture
    def knowledge_base_path(self) -> Path:
        raise NotImplementedError("provide a `knowledge_base_path` fixture: a folder holding a built knowledge base")

    @pytest.fixture
    def kb(self, knowledge_base_path: Path, registry: Any) -> Iterator[KnowledgeBase]:
        kb = KnowledgeBase.load(knowledge_base_path, registry=registry)
        yield kb
        kb.close()

    def query(self, kb: KnowledgeBase, text: str, **options: Any) -> QueryResponse:
        return kb.sync.query(text, mode=self.mode, **options)

    @staticmethod
    def ranking(response: QueryResponse) -> list[tuple[str, float]]:
        return [(r.id, r.score) for r in response.results]

    @staticmethod
    def documents_of(result: Any) -> set[str]:
        """The documents a result comes from: its own ``document_id``, or a graph fact's ``document_ids`` and evidence."""
        found = {result.metadata["document_id"]} if "document_id" in result.metadata else set()
        found.update(result.metadata.get("document_ids", ()))
        found.update(e.metadata["document_id"] for e in result.evidence if "document_id" in e.metadata)
        return found

    @staticmethod
    def assert_same_ranking(got: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
        """Same ids in the same order; scores equal up to float noise (a model may batch concurrent queries)."""
        assert [i for i, _ in got] == [i for i, _ in expected]
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-4, abs=1e-5)

    # --- shape -------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, engine, registry):
        assert isinstance(engine, QueryEngineProtocol)
        assert engine.mode == self.mode and registry.query_engine(self.mode).mode == self.mode
        assert isinstance(engine.required_assets, frozenset)
        # a SearchAssetRef, or anything the registry can use like one: matches(asset) and a readable str
        # (heta-server's memory_search requires "one of" several asset kinds)
        for ref in engine.required_assets:
            assert isinstance(ref, SearchAssetRef) or (callable(getattr(ref, "matches", None)) and str(ref)), ref

    def test_the_mode_is_available_once_built(self, kb):
        assert self.mode in kb.available_queries

    # --- answers ------------------------------------------------------------------------

    def test_the_known_query_finds_its_document_first(self, kb):
        text, document_id = self.known_query
        response = self.query(kb, text, top_k=5)
        assert isinstance(response, QueryResponse)
        assert response.metadata.get("mode") == self.mode
        assert response.results, response.issues
        assert document_id in self.documents_of(response.results[0])
        scores = [r.score for r in response.results]
        assert scores == sorted(scores, reverse=True)
        assert len({r.id for r in response.results}) == len(response.results)

    def test_top_k_bounds_the_results(self, kb):
        text, _ = self.known_query
        one = self.query(kb, text, top_k=1)
        assert len(one.results) == 1
        many = self.query(kb, text, top_k=3)
        assert 1 <= len(many.results) <= 3
        assert many.results[0].id == one.results[0].id

    def test_filters_keep_only_matching_documents(self, kb):
        text, document_id = self.known_query
        only = self.query(kb, text, top_k=10, filters={"document_id": document_id})
        assert only.results and all(document_id in self.documents_of(r) for r in only.results)
        listed = self.query(kb, text, top_k=10, filters={"document_id": [document_id, "no-such-document"]})
        self.assert_same_ranking(self.ranking(listed), self.ranking(only))
        assert self.query(kb, text, top_k=10, filters={"document_id": "no-such-document"}).results == ()

    def test_any_query_text_is_answered(self, kb):
        for text in (*HOSTILE_STRINGS, *UNICODE_TEXTS.values()):
            response = self.query(kb, text, top_k=3)
            assert isinstance(response, QueryResponse) and len(response.results) <= 3
            assert all(isinstance(issue.get("code"), str) for issue in response.issues)

    def test_a_trace_is_recorded_when_asked(self, kb):
        response = self.query(kb, self.known_query[0], top_k=3, trace=True)
        assert response.trace is not None

    # --- persistence, threads -----------------------------------------------------------------

    def test_answers_survive_reopening(self, kb, knowledge_base_path, registry):
        before = self.ranking(self.query(kb, self.known_query[0], top_k=5))
        kb.close()
        with KnowledgeBase.load(knowledge_base_path, registry=registry) as again:
            self.assert_same_ranking(self.ranking(self.query(again, self.known_query[0], top_k=5)), before)

    def test_concurrent_queries_agree_with_sequential_ones(self, kb):
        texts = [self.known_query[0], *HOSTILE_STRINGS[:3], UNICODE_TEXTS["zh"]]
        expected = [self.ranking(self.query(kb, t, top_k=5)) for t in texts]
        together = run_in_threads(lambda i: self.ranking(self.query(kb, texts[i], top_k=5)), len(texts))
        for got, wanted in zip(together, expected):
            self.assert_same_ranking(got, wanted)
