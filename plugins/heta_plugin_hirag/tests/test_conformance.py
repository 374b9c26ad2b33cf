"""Core's query-engine suite for each of the five modes, on the offline knowledge base."""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import QueryEngineSuite
from heta_plugin_hirag import (
    HiRagBridgeQueryEngine,
    HiRagGlobalQueryEngine,
    HiRagLocalQueryEngine,
    HiRagNobridgeQueryEngine,
    HiRagQueryEngine,
)


class _HiRagSuite(QueryEngineSuite):
    known_query = ("Which prize did Marie Curie win?", "space")
    engine_type: type = HiRagQueryEngine

    @pytest.fixture
    def engine(self):
        return self.engine_type()

    @pytest.fixture
    def registry(self, hirag_registry):
        return hirag_registry

    @pytest.fixture
    def knowledge_base_path(self, offline_kb_path):
        return offline_kb_path


class TestHiRagQuery(_HiRagSuite):
    mode = "hi_rag_query"


class TestHiRagNobridgeQuery(_HiRagSuite):
    mode = "hi_rag_nobridge_query"
    engine_type = HiRagNobridgeQueryEngine


class TestHiRagLocalQuery(_HiRagSuite):
    mode = "hi_rag_local_query"
    engine_type = HiRagLocalQueryEngine


class TestHiRagGlobalQuery(_HiRagSuite):
    mode = "hi_rag_global_query"
    engine_type = HiRagGlobalQueryEngine


class TestHiRagBridgeQuery(_HiRagSuite):
    mode = "hi_rag_bridge_query"
    engine_type = HiRagBridgeQueryEngine
