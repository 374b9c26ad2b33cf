"""A real small knowledge base (the graph plugin's nlp graph, MiniLM, FAISS, SQLite) with the LeanRAG step, built once.

Tests that only query share it (``offline_kb``); tests that build again work on a copy of its folder
(``kb_copy``), opened with the recipe they need (a scripted language model, other step options):
copying the folder costs milliseconds where a build from scratch costs seconds.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from heta_framework.testing import import_installed

for _name in ("heta_plugin_graph", "heta_plugin_vector"):
    import_installed(_name)

import heta_plugin_leanrag  # noqa: E402
import heta_plugin_local  # noqa: E402
import heta_plugin_openai  # noqa: E402
from heta_framework.kb import KnowledgeBase, KnowledgeModels  # noqa: E402
from heta_framework.testing import make_registry  # noqa: E402
from heta_plugin_graph.testing import DOCUMENTS, local_model, offline_models, server  # noqa: E402, F401  (fixtures)
from heta_plugin_leanrag.testing import recipe  # noqa: E402

import heta_plugin_graph  # noqa: E402
import heta_plugin_vector  # noqa: E402


def plugins() -> tuple:
    return (heta_plugin_vector, heta_plugin_local, heta_plugin_graph, heta_plugin_openai, heta_plugin_leanrag)


@pytest.fixture(scope="session")
def leanrag_registry(local_model):
    """The plugins in process (named apart from the conformance suite's own ``registry`` fixture)."""
    return make_registry(*plugins())


@pytest.fixture(scope="session")
def built_path(tmp_path_factory, leanrag_registry) -> Path:
    """The four documents built offline, closed; nothing writes here (``kb_copy`` for that)."""
    path = tmp_path_factory.mktemp("leanrag") / "kb"
    with KnowledgeBase.create(path, recipe(offline_models()), registry=leanrag_registry) as kb:
        report = kb.sync.build(list(DOCUMENTS))
        assert report.issues == []
    return path


@pytest.fixture(scope="module")
def offline_kb(built_path, leanrag_registry) -> Iterator[KnowledgeBase]:
    kb = KnowledgeBase.load(built_path, registry=leanrag_registry)
    yield kb
    kb.close()


@pytest.fixture
def kb_copy(built_path, leanrag_registry, tmp_path):
    """A factory: a copy of the built knowledge base, opened with ``models`` (default offline) and these step options."""
    opened: list[KnowledgeBase] = []

    def make(models: KnowledgeModels | None = None, **step_options: Any) -> KnowledgeBase:
        path = tmp_path / f"kb{len(opened)}"
        shutil.copytree(built_path, path)
        kb = KnowledgeBase(path, recipe(models or offline_models(), **step_options), leanrag_registry)
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()
