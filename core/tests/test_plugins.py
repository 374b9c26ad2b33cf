"""Plugin discovery through real entry points: broken, duplicate and incompatible plugins."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from heta_framework import __version__
from heta_framework.errors import DuplicateRegistrationError, PluginError
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing import inline_plugin, make_registry


def install_fake_distribution(site: Path, name: str, module: str, source: str, requires: str = "") -> None:
    """A real (if tiny) installed distribution: a module plus .dist-info with a `heta` entry point."""
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    if requires:
        metadata += f"Requires-Dist: {requires}\n"
    (info / "METADATA").write_text(metadata)
    (info / "entry_points.txt").write_text(f"[heta]\n{module} = {module}\n")


GOOD_PLUGIN = """
    from heta_framework.plugins import hookimpl
    from heta_framework.kb.search import QueryResponse

    class EchoEngine:
        mode = "echo_search"
        required_assets = frozenset()
        async def query(self, request, context):
            return QueryResponse()

    @hookimpl
    def register_query_engines(register):
        register(EchoEngine())
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


def test_broken_plugin_is_recorded_and_skipped(site):
    install_fake_distribution(site, "heta-plugin-good", "good_plugin", GOOD_PLUGIN)
    install_fake_distribution(site, "heta-plugin-broken", "broken_plugin", "raise ImportError('needs libfoo')\n")
    registry = PluginRegistry.from_entry_points()
    assert "echo_search" in registry.query_engine_registry().modes
    assert registry.owner("query_engines", "echo_search") == "heta-plugin-good"
    [failure] = [f for f in registry.failed if f.distribution == "heta-plugin-broken"]
    assert failure.reason == "import_error"
    assert "needs libfoo" in failure.error
    with pytest.raises(PluginError, match="heta-plugin-broken"):
        PluginRegistry.from_entry_points(strict=True)


def test_incompatible_plugin_is_reported_not_loaded(site):
    install_fake_distribution(site, "heta-plugin-future", "future_plugin", GOOD_PLUGIN, requires="heta-core>=9.0")
    registry = PluginRegistry.from_entry_points()
    [failure] = [f for f in registry.failed if f.distribution == "heta-plugin-future"]
    assert failure.reason == "incompatible"
    assert f"but {__version__} is installed" in failure.error
    assert "echo_search" not in registry.query_engine_registry().modes


def test_duplicate_names_name_both_distributions(site):
    install_fake_distribution(site, "heta-plugin-one", "plugin_one", GOOD_PLUGIN)
    install_fake_distribution(site, "heta-plugin-two", "plugin_two", GOOD_PLUGIN)
    with pytest.raises(DuplicateRegistrationError) as error:
        PluginRegistry.from_entry_points()
    assert "heta-plugin-one" in str(error.value) and "heta-plugin-two" in str(error.value)


def test_a_plugin_cannot_take_a_builtin_name():
    from heta_framework.builtin.steps import ParseDocuments

    with pytest.raises(DuplicateRegistrationError, match="heta-core"):
        make_registry(inline_plugin("copycat", steps=[ParseDocuments]))


def test_builtin_registers_through_the_same_hooks():
    registry = make_registry()
    [builtin] = registry.plugins
    assert builtin.distribution == "heta-core"
    assert builtin.registered["steps"] == ["parse_documents", "split_documents", "persist_chunks"]
    assert "sql_text_search" in builtin.registered["query_engines"]


def test_a_plugin_whose_hook_raises_is_skipped_in_lenient_mode():
    class Exploding:
        __name__ = "exploding"

        from heta_framework.plugins import hookimpl

        @hookimpl
        def register_steps(self, register):
            raise RuntimeError("boom")

    registry = PluginRegistry.from_plugins([Exploding()], strict=False)
    assert [f.error for f in registry.failed] == ["RuntimeError: boom"]
    assert "parse_documents" in registry.items["steps"]
