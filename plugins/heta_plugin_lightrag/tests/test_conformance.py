"""Core's query-engine suite for each of the four modes, on a real nlp-built graph."""

from __future__ import annotations

import heta_plugin_lightrag
import heta_plugin_local
import heta_plugin_openai
import pytest
from heta_framework.testing import make_registry
from heta_framework.testing.conformance import QueryEngineSuite
from heta_plugin_lightrag import LightRagGlobalEngine, LightRagHybridEngine, LightRagLocalEngine, LightRagMixEngine

import heta_plugin_graph
import heta_plugin_vector


class _LightRagSuite(QueryEngineSuite):
    known_query = ("Which prize did Marie Curie win?", "space")

    @pytest.fixture
    def registry(self, local_model):
        return make_registry(heta_plugin_vector, heta_plugin_local, heta_plugin_graph, heta_plugin_openai, heta_plugin_lightrag)

    @pytest.fixture
    def knowledge_base_path(self, offline_kb_path):
        return offline_kb_path


class TestLightRagLocal(_LightRagSuite):
    mode = "lightrag_local"

    @pytest.fixture
    def engine(self):
        return LightRagLocalEngine()


class TestLightRagGlobal(_LightRagSuite):
    mode = "lightrag_global"

    @pytest.fixture
    def engine(self):
        return LightRagGlobalEngine()


class TestLightRagHybrid(_LightRagSuite):
    mode = "lightrag_hybrid"

    @pytest.fixture
    def engine(self):
        return LightRagHybridEngine()


class TestLightRagMix(_LightRagSuite):
    mode = "lightrag_mix"

    @pytest.fixture
    def engine(self):
        return LightRagMixEngine()
