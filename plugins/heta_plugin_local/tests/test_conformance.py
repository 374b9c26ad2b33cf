"""The local MiniLM embedding client passes core's embedding-client conformance suite."""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import EmbeddingClientSuite


class TestLocalMiniLM(EmbeddingClientSuite):
    judges_similarity = True

    @pytest.fixture
    def embedding_client(self, minilm):
        return minilm
