"""Core's sql_text_search passes the query-engine conformance suite."""

from __future__ import annotations

import pytest
from heta_framework.builtin.engines.sql_text import SqlTextSearchEngine
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.testing import make_registry
from heta_framework.testing.conformance import QueryEngineSuite

DOCUMENTS = [
    SourceDocument(id="fox", name="fox.txt", text="The quick brown fox jumps over the lazy dog. Foxes live in dens."),
    SourceDocument(id="whales", name="whales.md", text="# Whales\n\nWhales are marine mammals. They breathe air through a blowhole."),
    SourceDocument(id="shanghai", name="shanghai.txt", text="上海市是中国的直辖市之一。长江在上海附近入海。"),
]


class TestSqlTextSearch(QueryEngineSuite):
    mode = "sql_text_search"
    known_query = ("marine mammals blowhole", "whales")

    @pytest.fixture
    def engine(self):
        return SqlTextSearchEngine()

    @pytest.fixture
    def registry(self):
        return make_registry()

    @pytest.fixture
    def knowledge_base_path(self, tmp_path, registry):
        recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=40, chunk_overlap=5), PersistChunks()])
        with KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry) as kb:
            kb.sync.build(DOCUMENTS)
        return tmp_path / "kb"
