from __future__ import annotations

from pathlib import Path

from heta_framework.testing import import_installed

import_installed("heta_plugin_vector")

import attrs
import heta_plugin_local
import numpy as np
import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, ModelProvider
from heta_framework.kb import KnowledgeModels, Recipe
from heta_framework.testing import inline_plugin, make_registry
from heta_plugin_local import create_client

import heta_plugin_vector
from heta_plugin_vector import EmbedChunks, IndexVectors

DOCUMENTS = Path(__file__).resolve().parents[2] / "examples" / "documents"
MODEL = "local/all-MiniLM-L6-v2"


class CountingEmbedder:
    """The real local model, counting calls and texts (so tests can prove the cache saves calls)."""

    calls = 0
    texts = 0

    def __init__(self, inner):
        self._inner = inner
        self.model_name = inner.model_name

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed(self, texts):
        type(self).calls += 1
        type(self).texts += len(texts)
        return await self._inner.embed(texts)


def _counting(config):
    real = attrs.evolve(config, model_name=f"local/{config.model}")
    return CountingEmbedder(create_client(real))


@pytest.fixture(scope="session")
def local_model():
    """Load the MiniLM weights once for the whole session (loaded models are shared per process)."""
    client = create_client(EmbeddingModel(model_name=MODEL))
    client.model()
    return client


@pytest.fixture
def registry(local_model):
    return make_registry(heta_plugin_vector, heta_plugin_local)


@pytest.fixture
def counting():
    CountingEmbedder.calls = 0
    CountingEmbedder.texts = 0
    return CountingEmbedder


@pytest.fixture
def counting_registry(local_model, counting):
    provider = ModelProvider(name="counting", kinds=frozenset({"embedding"}), create=_counting)
    return make_registry(heta_plugin_vector, heta_plugin_local, inline_plugin("counting", model_providers=[provider]))


def _vector_recipe(model: str = MODEL, stores=None, chunk_size: int = 120) -> Recipe:
    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name=model)),
        stores=stores or {},
        steps=[ParseDocuments(), SplitDocuments(chunk_size=chunk_size, chunk_overlap=20), PersistChunks(), EmbedChunks(), IndexVectors()],
    )


@pytest.fixture
def vector_recipe():
    """``vector_recipe(model=..., stores=..., chunk_size=...)``: parse, split, persist, embed, index."""
    return _vector_recipe


@pytest.fixture
def real_documents() -> Path:
    """The bundled Wikipedia articles (examples/SOURCES.md)."""
    return DOCUMENTS


@pytest.fixture
def clustered():
    """Unit vectors around 20 centres: the shape real embeddings have, so approximate indexes behave realistically."""

    def make(n: int, dimension: int = 32, seed: int = 0) -> np.ndarray:
        rng = np.random.default_rng(seed)
        centres = rng.normal(size=(20, dimension))
        points = centres[rng.integers(0, 20, n)] + 0.35 * rng.normal(size=(n, dimension))
        points /= np.linalg.norm(points, axis=1, keepdims=True)
        return points.astype(np.float32)

    return make


@pytest.fixture
def docs_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "fox.txt").write_text("The quick brown fox jumps over the lazy dog. Foxes are clever animals that live in dens.")
    (folder / "whales.md").write_text("# Whales\n\nWhales are marine mammals. They breathe air through a blowhole.")
    (folder / "shanghai.txt").write_text("上海市是中国的直辖市之一。长江在上海附近入海。")
    return folder
