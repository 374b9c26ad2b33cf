"""Whoosh and tantivy pass core's text-index suite (English and Chinese analyzers); full_text_search passes the query-engine suite on both."""

from __future__ import annotations

import heta_plugin_fulltext
import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument, StoreConfig
from heta_framework.testing import make_registry
from heta_framework.testing.conformance import QueryEngineSuite, TextIndexStoreSuite
from heta_plugin_fulltext import (
    FullTextSearchEngine,
    IndexFullText,
    TantivyStoreConfig,
    WhooshStoreConfig,
    WhooshTextIndex,
)

ENGINE_DOCUMENTS = [
    SourceDocument(id="fox", name="fox.txt", text="The quick brown fox jumps over the lazy dog. Foxes live in dens."),
    SourceDocument(id="whales", name="whales.md", text="# Whales\n\nWhales are marine mammals. They breathe air through a blowhole."),
    SourceDocument(id="python", name="python.txt", text="Python is a programming language with an interpreter."),
]


def _tantivy(config):
    from heta_plugin_fulltext.tantivy_store import TantivyTextIndex

    return lambda root: TantivyTextIndex.open(config, root)


class TestWhooshEnglish(TextIndexStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return lambda root: WhooshTextIndex.open(WhooshStoreConfig(analyzer="english"), root)


class TestWhooshChinese(TextIndexStoreSuite):
    segments_cjk = True

    @pytest.fixture
    def store_factory(self):
        return lambda root: WhooshTextIndex.open(WhooshStoreConfig(analyzer="chinese"), root)


class TestTantivyEnglish(TextIndexStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return _tantivy(TantivyStoreConfig(analyzer="english"))


class TestTantivyChinese(TextIndexStoreSuite):
    segments_cjk = True

    @pytest.fixture
    def store_factory(self):
        return _tantivy(TantivyStoreConfig(analyzer="chinese"))


class TestFullTextSearchEngine(QueryEngineSuite):
    mode = "full_text_search"
    known_query = ("marine mammals blowhole", "whales")

    @pytest.fixture(params=["whoosh", "tantivy"])
    def backend(self, request):
        return request.param

    @pytest.fixture
    def engine(self):
        return FullTextSearchEngine()

    @pytest.fixture
    def registry(self):
        return make_registry(heta_plugin_fulltext)

    @pytest.fixture
    def knowledge_base_path(self, tmp_path, registry, backend):
        recipe = Recipe(
            stores={"text": StoreConfig(type=backend)},
            steps=[ParseDocuments(), SplitDocuments(chunk_size=40, chunk_overlap=5), IndexFullText()],
        )
        with KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry) as kb:
            kb.sync.build(ENGINE_DOCUMENTS)
        return tmp_path / "kb"
