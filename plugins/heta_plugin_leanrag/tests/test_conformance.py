"""Core's query-engine suite for ``lean_rag_query`` (its default level_mode, 2) on the shared nlp-built knowledge base."""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import QueryEngineSuite
from heta_plugin_leanrag import LeanRagQueryEngine


class TestLeanRagQuery(QueryEngineSuite):
    mode = "lean_rag_query"
    known_query = ("Albert Einstein and the theory of relativity", "space")

    @pytest.fixture
    def engine(self):
        return LeanRagQueryEngine()

    @pytest.fixture
    def registry(self, leanrag_registry):
        return leanrag_registry

    @pytest.fixture
    def knowledge_base_path(self, built_path):
        return built_path
