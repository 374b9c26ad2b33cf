"""The SQLite graph store passes core's graph-store suite; heta_graph_search (nlp graph) passes the query-engine suite."""

from __future__ import annotations

import heta_plugin_local
import pytest
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.testing import make_registry
from heta_framework.testing.conformance import GraphStoreSuite, QueryEngineSuite

import heta_plugin_graph
import heta_plugin_vector
from heta_plugin_graph import HetaGraphProcedure, HetaGraphSearchEngine, SQLiteGraphStore


class TestSQLiteGraph(GraphStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return lambda root: SQLiteGraphStore.open(None, root)


class TestHetaGraphSearch(QueryEngineSuite):
    mode = "heta_graph_search"
    known_query = ("Which ocean is the largest?", "ocean")

    @pytest.fixture
    def engine(self):
        return HetaGraphSearchEngine()

    @pytest.fixture
    def registry(self, local_model):
        return make_registry(heta_plugin_vector, heta_plugin_local, heta_plugin_graph)

    @pytest.fixture
    def knowledge_base_path(self, tmp_path, registry, embedding_only, base_steps):
        documents = [
            SourceDocument(id="ocean", name="ocean.txt", text="The Pacific Ocean is the largest ocean on Earth. Blue whales feed on krill in the Pacific Ocean."),
            SourceDocument(id="rivers", name="rivers.txt", text="The Amazon River flows into the Atlantic Ocean. It crosses Brazil."),
        ]
        recipe = Recipe(models=embedding_only, steps=[*base_steps, HetaGraphProcedure(extractor="nlp")])
        with KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry) as kb:
            kb.sync.build(documents)
        return tmp_path / "kb"
