"""A real small knowledge base (the graph plugin's four documents: MiniLM, FAISS, SQLite, the nlp graph, and the wiki
pages), built once offline. Tests that need the language model open the same folder with a recipe that names the
scripted server (queries only write nothing); tests that build again work on a copy."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from heta_framework.testing import import_installed

for _name in ("heta_plugin_graph", "heta_plugin_vector"):
    import_installed(_name)

import heta_plugin_local  # noqa: E402
import heta_plugin_openai  # noqa: E402
import heta_plugin_wiki  # noqa: E402
from heta_framework.kb import KnowledgeBase, KnowledgeModels  # noqa: E402
from heta_framework.testing import make_registry  # noqa: E402
from heta_framework.testing.http import ScriptedServer  # noqa: E402
from heta_plugin_graph.testing import DOCUMENTS, local_model, offline_models, scripted_language_models  # noqa: E402, F401
from heta_plugin_wiki.testing import recipe, wiki_issues  # noqa: E402

import heta_plugin_graph  # noqa: E402
import heta_plugin_vector  # noqa: E402


def plugins() -> tuple:
    return (heta_plugin_vector, heta_plugin_local, heta_plugin_graph, heta_plugin_openai, heta_plugin_wiki)


@pytest.fixture(scope="session")
def wiki_registry(local_model):
    return make_registry(*plugins())


@pytest.fixture(scope="session")
def built_path(tmp_path_factory, wiki_registry) -> Path:
    path = tmp_path_factory.mktemp("wiki") / "kb"
    with KnowledgeBase.create(path, recipe(offline_models()), registry=wiki_registry) as kb:
        report = kb.sync.build(list(DOCUMENTS))
        assert wiki_issues(report) == []
    return path


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as scripted:
        yield scripted


@pytest.fixture
def agent_kb(built_path, wiki_registry, server) -> Iterator[KnowledgeBase]:
    """The built knowledge base opened with the scripted language model (max_attempts 1: a 500 fails at once)."""
    kb = KnowledgeBase(built_path, recipe(scripted_language_models(server, max_attempts=1)), wiki_registry)
    yield kb
    kb.close()


@pytest.fixture
def kb_copy(built_path, wiki_registry, tmp_path):
    opened: list[KnowledgeBase] = []

    def make(models: KnowledgeModels | None = None, **wiki_options) -> KnowledgeBase:
        path = tmp_path / f"kb{len(opened)}"
        shutil.copytree(built_path, path)
        kb = KnowledgeBase(path, recipe(models or offline_models(), **wiki_options), wiki_registry)
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()
