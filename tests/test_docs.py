"""The docs cover every hook, step, procedure, query mode and issue code; the reference cannot drift."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from heta_framework.plugins import hookspecs
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.reference import generate_reference

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
ALL_DOCS = "\n".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
SOURCE_DIRS = [ROOT / "core" / "src", *ROOT.glob("heta_plugin_*/src"), *ROOT.glob("plugins/*/src")]


@pytest.fixture(scope="module")
def registry():
    return PluginRegistry.from_entry_points(strict=True)


def test_the_hooks_page_matches_the_hookspecs_signatures():
    hooks_doc = (DOCS / "hooks.md").read_text()
    specs = {name: fn for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")}
    assert specs
    expected = set()
    for name, spec in specs.items():
        parameters = ", ".join(
            f"{p.name}: {p.annotation}" if p.annotation is not inspect.Parameter.empty else p.name
            for p in inspect.signature(spec).parameters.values()
        )
        expected.add(f"## {name}({parameters})")
    documented = set(re.findall(r"^## register_\w+\(.*\)$", hooks_doc, re.MULTILINE))
    assert documented == expected, "docs/hooks.md headings must be the hookspecs' signatures"


def test_every_step_procedure_and_mode_is_documented(registry):
    names = [*registry.items["steps"], *registry.items["procedures"], *registry.items["query_engines"]]
    missing = [name for name in names if f"`{name}`" not in ALL_DOCS]
    assert not missing


def test_value_types_page_is_generated_from_the_code():
    from heta_framework.reference.value_types import generate_value_types

    assert (DOCS / "value-types.md").read_text(encoding="utf-8") == generate_value_types(), (
        "docs/value-types.md is stale: run `python scripts/generate_reference.py`"
    )


def test_value_type_fields_carry_their_source_comments():
    from heta_framework.contracts.documents import Chunk
    from heta_framework.reference.value_types import field_comments

    comments = field_comments(Chunk)
    assert comments["page"].startswith("the page its start lies on")
    assert comments["start"].startswith("character offsets") and "end" not in comments  # a comment covers the next field only


def test_reference_is_generated_from_the_installed_plugins(registry):
    assert (DOCS / "reference.md").read_text(encoding="utf-8") == generate_reference(registry), (
        "docs/reference.md is stale: run `python scripts/generate_reference.py`"
    )


def _issue_codes() -> set[str]:
    patterns = [
        re.compile(r"""\.report\(\s*["']([a-z_]+)["']"""),
        re.compile(r"""_issue\(\s*["']([a-z_]+)["']"""),
        re.compile(r"""code\s*=\s*["']([a-z_]+)["']"""),
        re.compile(r"""["']code["']\s*:\s*["']([a-z_]+)["']"""),
    ]
    codes: set[str] = set()
    for folder in SOURCE_DIRS:
        for path in folder.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for pattern in patterns:
                codes.update(pattern.findall(text))
    return codes


def test_every_issue_code_is_in_troubleshooting():
    troubleshooting = (DOCS / "troubleshooting.md").read_text(encoding="utf-8")
    codes = _issue_codes()
    assert {"empty_document", "binary_document", "corrupt_document"} <= codes
    missing = sorted(code for code in codes if f"`{code}`" not in troubleshooting)
    assert not missing, f"document these issue codes in docs/troubleshooting.md: {missing}"


def test_every_error_class_is_in_troubleshooting():
    from heta_framework import errors

    troubleshooting = (DOCS / "troubleshooting.md").read_text(encoding="utf-8")
    classes = [name for name, cls in inspect.getmembers(errors, inspect.isclass) if issubclass(cls, errors.HetaError)]
    missing = [name for name in classes if f"`{name}`" not in troubleshooting]
    assert not missing
