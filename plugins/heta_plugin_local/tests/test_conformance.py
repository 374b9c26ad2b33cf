"""The local MiniLM embedding client passes core's embedding-client conformance suite."""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import EmbeddingClientSuite


class TestLocalMiniLM(EmbeddingClientSuite):
    judges_similarity = True

    @pytest.fixture
    def embedding_client(self, minilm):
        return minilm


class TestLocalMultilingualE5(EmbeddingClientSuite):
    judges_similarity = True

    @pytest.fixture
    def embedding_client(self):
        from heta_framework.common.models import EmbeddingModel
        from heta_plugin_local import create_client

        return create_client(EmbeddingModel(model_name="local/multilingual-e5-small"))
