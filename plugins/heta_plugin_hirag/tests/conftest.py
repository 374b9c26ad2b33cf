"""Small real knowledge bases: the graph plugin's nlp graph (MiniLM, FAISS, SQLite) with the three HiRAG steps."""

from __future__ import annotations

from typing import Any

import pytest
from heta_framework.testing import import_installed

for _name in ("heta_plugin_graph", "heta_plugin_vector"):
    import_installed(_name)

import heta_plugin_hirag  # noqa: E402
import heta_plugin_local  # noqa: E402
import heta_plugin_openai  # noqa: E402
from heta_framework.kb import KnowledgeBase  # noqa: E402
from heta_framework.testing import make_registry  # noqa: E402
from heta_plugin_graph.testing import DOCUMENTS, local_model, offline_models, server  # noqa: E402, F401  (fixtures)
from heta_plugin_hirag.testing import hirag_recipe  # noqa: E402

import heta_plugin_graph  # noqa: E402
import heta_plugin_vector  # noqa: E402


def plugins() -> tuple[Any, ...]:
    return heta_plugin_vector, heta_plugin_local, heta_plugin_graph, heta_plugin_openai, heta_plugin_hirag


@pytest.fixture(scope="session")
def hirag_registry(local_model):
    return make_registry(*plugins())


@pytest.fixture(scope="session")
def offline_kb_path(tmp_path_factory, hirag_registry):
    """The four documents built offline with every HiRAG step, then closed (tests and core's suites open it)."""
    path = tmp_path_factory.mktemp("hirag") / "kb"
    with KnowledgeBase.create(path, hirag_recipe(offline_models()), registry=hirag_registry) as kb:
        report = kb.sync.build(list(DOCUMENTS))
        assert report.issues == []
    return path
