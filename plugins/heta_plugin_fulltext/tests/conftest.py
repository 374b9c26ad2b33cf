from __future__ import annotations

from pathlib import Path

import heta_plugin_fulltext
import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument, StoreConfig
from heta_framework.testing import make_registry
from heta_plugin_fulltext import IndexFullText

BACKENDS = ("whoosh", "tantivy")

_ENGLISH = [
    SourceDocument(id="fox", name="fox.txt", text="The quick brown fox jumps over the lazy dog. Foxes are clever animals that live in dens.",
                   metadata={"topic": "animals", "year": 2020, "author": "Ada Lovelace"}),
    SourceDocument(id="whales", name="whales.md", text="# Whales\n\nWhales are marine mammals. They breathe air through a blowhole.",
                   metadata={"topic": "animals", "year": 2021}),
    SourceDocument(id="python", name="python.txt", text="Python is a programming language. Its interpreter runs scripts and notebooks.",
                   metadata={"topic": "computing", "year": 2021}),
]

_CHINESE = [
    SourceDocument(id="shanghai", name="shanghai.txt", text="上海市是中国的直辖市之一。长江在上海附近入海。"),
    SourceDocument(id="panda", name="panda.txt", text="大熊猫主要生活在四川的山区，以竹子为食。"),
    SourceDocument(id="mixed", name="mixed.txt", text="我们用 Python 编写机器学习程序，并在 GPU 上训练神经网络 models。"),
    SourceDocument(id="english", name="english.txt", text="The Yangtze river flows into the sea near Shanghai."),
]


@pytest.fixture
def registry():
    return make_registry(heta_plugin_fulltext)


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """Every test that takes this fixture runs once per text-index backend."""
    return request.param


def full_text_recipe(backend: str, analyzer: str | None = "english", **store_options) -> Recipe:
    """``analyzer=None`` leaves it out of the recipe, as ``heta init`` does."""
    named = {} if analyzer is None else {"analyzer": analyzer}
    return Recipe(
        stores={"text": StoreConfig(type=backend, options={**named, **store_options})},
        steps=[ParseDocuments(), SplitDocuments(chunk_size=60, chunk_overlap=10), IndexFullText()],
    )


@pytest.fixture
def make_kb(tmp_path: Path, registry, backend):
    """``await make_kb(documents, analyzer=...)``: a built knowledge base on the current backend."""
    opened: list[KnowledgeBase] = []

    async def build(documents, analyzer: str | None = "english", **store_options) -> KnowledgeBase:
        kb = KnowledgeBase.create(tmp_path / f"kb{len(opened)}", full_text_recipe(backend, analyzer, **store_options), registry=registry)
        opened.append(kb)
        await kb.build(documents)
        return kb

    yield build
    for kb in opened:
        kb.close()


@pytest.fixture
def english_documents() -> list[SourceDocument]:
    return list(_ENGLISH)


@pytest.fixture
def chinese_documents() -> list[SourceDocument]:
    """Chinese, mixed Chinese/English, and one English document."""
    return list(_CHINESE)


@pytest.fixture
def search():
    """``await search(kb, text, **query_options)``: document ids of the hits, best first."""

    async def run(kb: KnowledgeBase, text: str, **kwargs) -> list[str]:
        response = await kb.query(text, mode="full_text_search", **kwargs)
        return [result.document_id for result in response.results]

    return run
