"""The store backend that docs/writing-a-plugin.md teaches runs as written: it registers, a recipe uses it, it passes its suite."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument, StoreConfig
from heta_framework.testing import make_registry

DOC = Path(__file__).resolve().parent.parent / "docs" / "writing-a-plugin.md"


def snippet(name: str, language: str = "python") -> str:
    match = re.search(rf"<!-- snippet: {name} -->\n```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert match, f"docs/writing-a-plugin.md lost its {name!r} snippet"
    return match.group(1)


def _module(name: str, source: str, **attributes) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    sys.modules[name] = module  # attrs and dataclass-style machinery look classes' modules up
    exec(compile(source, f"<docs snippet {name}>", "exec"), module.__dict__)  # noqa: S102  (our own docs, run as the reader would)
    return module


# the package the docs describe, built from the docs' own code
_package = _module("heta_plugin_objects_sqlite", "", __path__=[])
_store = _module("heta_plugin_objects_sqlite.store", snippet("store"))
_package.store = _store
_plugin = _module("heta_plugin_objects_sqlite.plugin", snippet("register"))
_suite = _module("heta_plugin_objects_sqlite_tests", snippet("suite"))

#: the docs' test class, collected here as if it were the reader's tests/test_conformance.py
TestDocsSQLiteObjectStore = _suite.TestSQLiteObjectStore


@pytest.fixture
def registry():
    return make_registry(_plugin)


def test_the_docs_recipe_picks_the_docs_store(registry):
    recipe = Recipe.from_toml(snippet("recipe", "toml"), registry)
    assert recipe.stores["objects"].type == "sqlite_objects"
    assert recipe.stores["objects"].options == {"path": "objects.sqlite"}


def test_the_docs_store_registers_and_a_recipe_builds_with_it(tmp_path, registry):
    assert registry.store_type("objects", "sqlite_objects").factory == _store.SQLiteObjectStore.open
    recipe = Recipe(
        stores={"objects": StoreConfig(type="sqlite_objects", options={"path": "blobs.sqlite"})},
        steps=[ParseDocuments(), SplitDocuments(chunk_size=20, chunk_overlap=0)],
    )
    with KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry) as kb:
        report = kb.sync.build([SourceDocument(id="fox", name="fox.txt", text="The quick brown fox jumps over the lazy dog.")])
        assert not report.issues
        objects = kb.get_component("stores.objects")
        assert isinstance(objects, _store.SQLiteObjectStore)
        assert any(key.startswith("parsed/") for key in objects.keys())  # noqa: SIM118  (a store, not a dict)
    assert (tmp_path / "kb" / "blobs.sqlite").exists()
    assert not (tmp_path / "kb" / "objects").exists()  # the folder store was not used
