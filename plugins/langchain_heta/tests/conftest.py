"""A small real knowledge base (core's SQL recipe: parse, split, persist chunks) built once per module."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry

TEXTS = {
    "fleming": ("medicine", "Penicillin was discovered by Alexander Fleming in 1928, when a mould killed the bacteria on a culture plate."),
    "whales": ("ocean", "Humpback whales sing long songs that carry across the ocean; penicillin plays no part in their lives."),
    "steam": ("engineering", "A steam engine burns coal to boil water, and the steam pushes a piston back and forth."),
    "coral": ("ocean", "Coral reefs are built by tiny animals and shelter a quarter of all the fish in the ocean."),
}
SQL_RECIPE = {"steps": [{"step": "parse_documents"}, {"step": "split_documents"}, {"step": "persist_chunks"}]}


def build(path: Path, recipe: Mapping[str, Any]) -> Path:
    """Build the documents of ``TEXTS`` into a new knowledge base at ``path`` with ``recipe``, and close it."""
    registry = PluginRegistry.from_entry_points(strict=True)
    kb = KnowledgeBase.create(path, Recipe.from_dict(dict(recipe), registry), registry=registry)
    kb.sync.build([SourceDocument(text=text, id=doc_id, metadata={"topic": topic}) for doc_id, (topic, text) in TEXTS.items()])
    kb.close()
    return path


def pytest_configure(config: pytest.Config) -> None:
    # the workspace's pytest settings declare it too; installed alone (make isolation) only this one applies
    config.addinivalue_line("markers", "slow: loads real models")


@pytest.fixture(scope="session")
def build_knowledge_base() -> Callable[[Path, Mapping[str, Any]], Path]:
    return build


@pytest.fixture(scope="module")
def kb_path(tmp_path_factory) -> Path:
    """The folder of a built knowledge base; each test opens it itself, as a user would."""
    return build(tmp_path_factory.mktemp("heta") / "kb", SQL_RECIPE)


@pytest.fixture(scope="session")
def texts() -> dict[str, tuple[str, str]]:
    """document id -> (topic, text) of the knowledge base's documents."""
    return TEXTS
