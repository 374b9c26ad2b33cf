"""FAISS passes core's vector-store suite (flat and HNSW); vector_search passes the query-engine suite."""

from __future__ import annotations

import heta_plugin_local
import pytest
from heta_framework.kb import KnowledgeBase, SourceDocument
from heta_framework.testing import make_registry
from heta_framework.testing.conformance import QueryEngineSuite, VectorStoreSuite

import heta_plugin_vector
from heta_plugin_vector import FaissStoreConfig, FaissVectorStore, VectorSearchEngine


class TestFaissFlat(VectorStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return lambda root: FaissVectorStore.open(None, root)


class TestFaissHNSW(VectorStoreSuite):
    @pytest.fixture
    def store_factory(self):
        # below filter_exact_limit and with a wide search, HNSW answers exactly at the suite's sizes
        return lambda root: FaissVectorStore.open(FaissStoreConfig(index="hnsw", ef_search=512), root)


class TestVectorSearchEngine(QueryEngineSuite):
    mode = "vector_search"
    known_query = ("sea creatures that breathe through a blowhole", "whales")

    @pytest.fixture
    def engine(self):
        return VectorSearchEngine()

    @pytest.fixture
    def registry(self, local_model):
        return make_registry(heta_plugin_vector, heta_plugin_local)

    @pytest.fixture
    def knowledge_base_path(self, tmp_path, registry, vector_recipe):
        documents = [
            SourceDocument(id="fox", name="fox.txt", text="The quick brown fox jumps over the lazy dog. Foxes live in dens."),
            SourceDocument(id="whales", name="whales.md", text="# Whales\n\nWhales are marine mammals. They breathe air through a blowhole."),
            SourceDocument(id="python", name="python.txt", text="Python is a programming language with an interpreter."),
        ]
        with KnowledgeBase.create(tmp_path / "kb", vector_recipe(chunk_size=40), registry=registry) as kb:
            kb.sync.build(documents)
        return tmp_path / "kb"
