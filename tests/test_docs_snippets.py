"""Every ``python`` and ``toml`` block in docs/*.md and docs/plugins/*.md is checked against the code.

- Python: it parses, and every import it makes resolves to a module and name that exist
  (a renamed class or moved module breaks the docs here, not in a reader's hands).
  Blocks that run end to end are executed by their own tests (test_docs_store_backend.py,
  test_integrations_docs.py, test_docs_examples.py); this file holds the floor for all.
- TOML: it parses; a recipe (it has ``[[steps]]``, ``[models...]`` or ``[stores...]``) loads
  with ``Recipe.from_toml`` and the installed plugins, so step names, store types, options
  and model kinds are real; a ``pyproject.toml`` excerpt's ``heta`` entry points import.

A block that is deliberately partial (a signature, a fragment) is marked by the line
``<!-- illustrative -->`` right above it: it is still parsed when it is whole code, but its
imports and recipe are not checked. A block marked ``<!-- snippet: NAME -->`` is run by the
test that reads it by that name (its recipe may name the docs' own example plugin).
"""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path
from typing import Generic, Protocol

import attrs
import pytest
from heta_framework.kb.recipe import Recipe
from heta_framework.plugins.registry import PluginRegistry

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = sorted([*(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "plugins").glob("*.md")])
ILLUSTRATIVE = "<!-- illustrative -->"
NAMED = re.compile(r"<!-- snippet: [\w-]+ -->")
BLOCK = re.compile(r"^```(python|toml)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


@attrs.frozen
class Snippet:
    path: Path
    line: int
    language: str
    code: str
    illustrative: bool
    named: bool  # run in full by its own test

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def snippets() -> list[Snippet]:
    found: list[Snippet] = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
            line = text.count("\n", 0, match.start()) + 1
            found.append(Snippet(path, line, match.group(1), match.group(2), before == ILLUSTRATIVE, bool(NAMED.fullmatch(before))))
    return found


SNIPPETS = snippets()
PYTHON = [s for s in SNIPPETS if s.language == "python"]
TOML = [s for s in SNIPPETS if s.language == "toml"]


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    return PluginRegistry.from_entry_points(strict=True)


def test_the_docs_have_snippets_of_both_kinds():
    assert len(PYTHON) >= 30 and len(TOML) >= 15
    assert sum(s.illustrative for s in SNIPPETS) < len(SNIPPETS) / 4, "most snippets must be checked in full"


def _imports(tree: ast.AST) -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


#: what readers install themselves for an example (not a Heta distribution, not in the test venv's contract)
READER_OWN = {"heta_plugin_objects_sqlite", "heta_plugin_myplugin"}


@pytest.mark.parametrize("snippet", PYTHON, ids=lambda s: s.where)
def test_python_snippet_parses_and_its_imports_exist(snippet: Snippet):
    try:
        tree = ast.parse(snippet.code, filename=snippet.where)
    except SyntaxError as exc:
        if snippet.illustrative:
            return
        raise AssertionError(f"{snippet.where}: not valid Python ({exc}); mark a fragment {ILLUSTRATIVE}") from None
    if snippet.illustrative:
        return
    for module_name, names in _imports(tree):
        if module_name.split(".")[0] in READER_OWN:
            continue
        module = importlib.import_module(module_name)
        for name in names:
            if name == "*" or hasattr(module, name):
                continue
            importlib.import_module(f"{module_name}.{name}")  # a submodule: raises when it does not exist


def _is_recipe(data: dict) -> bool:
    return bool({"steps", "models", "stores", "parsers", "query"} & set(data)) and "project" not in data


@pytest.mark.parametrize("snippet", TOML, ids=lambda s: s.where)
def test_toml_snippet_parses_and_a_recipe_loads(snippet: Snippet, registry):
    data = tomllib.loads(snippet.code)
    if snippet.illustrative:
        return
    if _is_recipe(data) and not snippet.named:
        Recipe.from_toml(snippet.code, registry)
    for value in data.get("project", {}).get("entry-points", {}).get("heta", {}).values():
        if value.split(".")[0] not in READER_OWN:
            importlib.import_module(value.split(":")[0])


def _protocol_members(protocol: type) -> set[str]:
    names: set[str] = set()
    for cls in protocol.__mro__:
        if cls in (object, Protocol, Generic):
            continue
        names |= {n for n in vars(cls) if not n.startswith("_")}
        names |= {n for n in getattr(cls, "__annotations__", {}) if not n.startswith("_")}
    return names


def test_writing_a_plugin_lists_every_method_of_every_store_contract():
    """A reader writes a backend from the page alone: every contract member is named there."""
    from heta_framework.kb import stores
    from heta_framework.kb.components import ComponentAccessProtocol

    page = (ROOT / "docs" / "writing-a-plugin.md").read_text(encoding="utf-8")
    section = page.split("## Writing a store backend", 1)[1].split("\n## ", 1)[0]
    contracts = [stores.ObjectStoreProtocol, stores.SQLStore, stores.TextIndexStore, stores.VectorStoreProtocol,
                 stores.VectorCollectionProtocol, stores.GraphStore, ComponentAccessProtocol]
    missing = {
        contract.__name__: sorted(m for m in _protocol_members(contract) if not re.search(rf"`(context\.)?{m}\b", section))
        for contract in contracts
    }
    assert not any(missing.values()), f"docs/writing-a-plugin.md does not name: {missing}"
