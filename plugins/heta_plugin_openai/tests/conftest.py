from __future__ import annotations

import pytest
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.testing.http import scripted_server  # noqa: F401  (the shared fixture)

API_KEY = "sk-test-SECRET-4f9a2c71"

# fast retries so that retry tests take milliseconds
FAST = {"retry_initial_delay": 0.01, "retry_max_delay": 0.05, "timeout": 5}


@pytest.fixture
def api_key() -> str:
    return API_KEY


@pytest.fixture
def language_model(scripted_server):
    def make(**options) -> LanguageModel:
        return LanguageModel(
            model_name="openai/test-model", base_url=scripted_server.base_url, api_key=API_KEY, options={**FAST, **options}
        )

    return make


@pytest.fixture
def embedding_model(scripted_server):
    def make(**options) -> EmbeddingModel:
        return EmbeddingModel(
            model_name="openai/test-embedding", base_url=scripted_server.base_url, api_key=API_KEY, options={**FAST, **options}
        )

    return make
