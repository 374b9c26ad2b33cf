from __future__ import annotations

import pytest
from heta_framework.common.models import EmbeddingModel
from heta_plugin_local import create_client


@pytest.fixture(scope="session")
def minilm():
    """The real all-MiniLM-L6-v2 client, weights loaded once per session."""
    client = create_client(EmbeddingModel(model_name="local/all-MiniLM-L6-v2"))
    client.model()
    return client
