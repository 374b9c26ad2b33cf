from __future__ import annotations

from pathlib import Path

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.testing import make_registry

DOCUMENTS = Path(__file__).resolve().parents[2] / "examples" / "documents"


@pytest.fixture
def real_documents() -> Path:
    """The bundled Wikipedia articles (examples/SOURCES.md)."""
    return DOCUMENTS


@pytest.fixture
def registry():
    return make_registry()


@pytest.fixture
def sql_recipe():
    return Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=120, chunk_overlap=20), PersistChunks()])


@pytest.fixture
def docs_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "fox.txt").write_text("The quick brown fox jumps over the lazy dog. Foxes are clever animals that live in dens.")
    (folder / "whales.md").write_text("# Whales\n\nWhales are marine mammals. They breathe air through a blowhole.")
    (folder / "shanghai.txt").write_text("上海市是中国的直辖市之一。长江在上海附近入海。")
    return folder


@pytest.fixture
def sql_kb(tmp_path: Path, registry, sql_recipe) -> KnowledgeBase:
    return KnowledgeBase.create(tmp_path / "kb", sql_recipe, registry=registry)
