"""Plugin discovery through real entry points: broken, duplicate, incompatible, half-registering and misspelled plugins."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from heta_framework import __version__
from heta_framework.cli.main import cli
from heta_framework.errors import DuplicateRegistrationError, PluginError
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing import inline_plugin, make_registry

FAKE_DISTRIBUTIONS: set[str] = set()


def fake_failures(registry: PluginRegistry) -> list:
    """The failures of distributions these tests installed (the real plugins of the venv load too)."""
    return [f for f in registry.failed if f.distribution in FAKE_DISTRIBUTIONS]


def install_fake_distribution(site: Path, name: str, module: str, source: str, requires: str = "") -> None:
    """A real (if tiny) installed distribution: a module plus .dist-info with a `heta` entry point."""
    FAKE_DISTRIBUTIONS.add(name)
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
    yield folder
    # the next test may install another module of the same name
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", "") or "").startswith(str(folder)):
            del sys.modules[name]


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


def test_a_duplicate_name_disables_the_second_plugin_and_names_both(site):
    install_fake_distribution(site, "heta-plugin-one", "plugin_one", GOOD_PLUGIN)
    install_fake_distribution(site, "heta-plugin-two", "plugin_two", GOOD_PLUGIN)
    registry = PluginRegistry.from_entry_points()
    # the first one keeps the mode; the one that came second is the one disabled, and it is told why
    assert registry.owner("query_engines", "echo_search") == "heta-plugin-one"
    assert "heta-plugin-one" in {p.distribution for p in registry.plugins}
    assert "heta-plugin-two" not in {p.distribution for p in registry.plugins}
    [failure] = fake_failures(registry)
    assert (failure.distribution, failure.reason) == ("heta-plugin-two", "duplicate")
    assert "'echo_search' of 'heta-plugin-two' is already registered by 'heta-plugin-one'" in failure.error
    with pytest.raises(DuplicateRegistrationError) as error:
        PluginRegistry.from_entry_points(strict=True)
    assert "heta-plugin-one" in str(error.value) and "heta-plugin-two" in str(error.value)


def test_every_command_keeps_working_beside_a_duplicate(site, tmp_path):
    install_fake_distribution(site, "heta-plugin-one", "plugin_one", GOOD_PLUGIN)
    install_fake_distribution(site, "heta-plugin-two", "plugin_two", GOOD_PLUGIN)
    runner = CliRunner()
    listed = runner.invoke(cli, ["plugins", "--json"])
    assert listed.exit_code == 0, listed.output
    report = json.loads(listed.output)
    assert [f["distribution"] for f in report["failed"] if f["distribution"] in FAKE_DISTRIBUTIONS] == ["heta-plugin-two"]
    assert "heta-plugin-one" in {p["distribution"] for p in report["plugins"]}
    created = runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "init"])
    assert created.exit_code == 0, created.output
    modes = runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "modes", "--json"])
    assert modes.exit_code == 0, modes.output
    assert "echo_search" in modes.output


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


HALF_WAY_PLUGIN = """
    from heta_framework.plugins import hookimpl
    from heta_framework.kb.search import QueryResponse

    class HalfEngine:
        mode = "half_search"
        required_assets = frozenset()
        async def query(self, request, context):
            return QueryResponse()

    class HalfStep:
        name = "half_step"
        async def run(self, context):
            pass

    @hookimpl
    def register_steps(register):
        register(HalfStep)

    @hookimpl
    def register_query_engines(register):
        register(HalfEngine())
        raise RuntimeError("configuration file missing")
"""


def test_a_hook_that_raises_half_way_registers_nothing_from_its_plugin(site):
    install_fake_distribution(site, "heta-plugin-good", "good_plugin", GOOD_PLUGIN)
    install_fake_distribution(site, "heta-plugin-half", "half_plugin", HALF_WAY_PLUGIN)
    registry = PluginRegistry.from_entry_points()
    modes = registry.query_engine_registry().modes
    assert "half_search" not in modes and "echo_search" in modes
    assert "half_step" not in registry.items["steps"]  # its other hook ran fine, and still counts for nothing
    [failure] = fake_failures(registry)
    assert (failure.distribution, failure.reason) == ("heta-plugin-half", "register_error")
    assert "configuration file missing" in failure.error
    assert "heta-plugin-half" not in {p.distribution for p in registry.plugins}
    with pytest.raises(PluginError, match="heta-plugin-half"):
        PluginRegistry.from_entry_points(strict=True)


MISSPELLED_PLUGIN = """
    from heta_framework.plugins import hookimpl

    class Step:
        name = "never_seen"
        async def run(self, context):
            pass

    @hookimpl
    def register_step(register):
        register(Step)
"""


def test_a_misspelled_hook_is_reported_with_the_right_name(site):
    install_fake_distribution(site, "heta-plugin-typo", "typo_plugin", MISSPELLED_PLUGIN)
    install_fake_distribution(site, "heta-plugin-good", "good_plugin", GOOD_PLUGIN)
    registry = PluginRegistry.from_entry_points()
    [failure] = fake_failures(registry)
    assert (failure.distribution, failure.reason) == ("heta-plugin-typo", "unknown_hook")
    assert "'register_step' is not a Heta hook" in failure.error and "Did you mean 'register_steps'" in failure.error
    assert "echo_search" in registry.query_engine_registry().modes
    with pytest.raises(PluginError, match="register_step"):
        PluginRegistry.from_entry_points(strict=True)


WRONG_ITEM_PLUGIN = """
    from heta_framework.plugins import hookimpl

    def open_store(config, root):
        return None

    @hookimpl
    def register_stores(register):
        register(open_store)
"""


def test_a_wrong_kind_of_item_fails_its_plugin_with_what_the_hook_expects(site):
    install_fake_distribution(site, "heta-plugin-wrong", "wrong_plugin", WRONG_ITEM_PLUGIN)
    registry = PluginRegistry.from_entry_points()
    [failure] = fake_failures(registry)
    assert failure.reason == "register_error"
    assert "register_stores expects a StoreType" in failure.error and "StoreType(name, slot, factory" in failure.error


TYPED_PLUGIN = """
    from heta_framework.plugins import hookimpl
    from heta_framework.kb.search import QueryResponse

    seen = []

    class TypedEngine:
        mode = "typed_search"
        required_assets = frozenset()
        async def query(self, request, context):
            return QueryResponse()

    @hookimpl
    def register_query_engines(register):
        seen.append(register)
        register.add_query_engine(TypedEngine())
"""


def test_hooks_receive_typed_registrars(site):
    from heta_framework.plugins.registrars import QueryEngineRegistrar

    install_fake_distribution(site, "heta-plugin-typed", "typed_plugin", TYPED_PLUGIN)
    registry = PluginRegistry.from_entry_points()
    import typed_plugin

    assert [type(r) for r in typed_plugin.seen] == [QueryEngineRegistrar]
    assert registry.owner("query_engines", "typed_search") == "heta-plugin-typed"


SECOND_PLUGIN = GOOD_PLUGIN.replace("echo_search", "second_search").replace("EchoEngine", "SecondEngine")


@pytest.mark.parametrize(
    ("value", "loaded"),
    [
        ("heta-plugin-one", {"echo_search"}),
        ("plugin_two", {"second_search"}),  # the entry-point name works too
        ("HETA_PLUGIN_ONE, heta-plugin-two", {"echo_search", "second_search"}),
        ("", set()),
    ],
)
def test_heta_load_plugins_loads_only_the_named_plugins(site, monkeypatch, value, loaded):
    install_fake_distribution(site, "heta-plugin-one", "plugin_one", GOOD_PLUGIN)
    install_fake_distribution(site, "heta-plugin-two", "plugin_two", SECOND_PLUGIN)
    monkeypatch.setenv("HETA_LOAD_PLUGINS", value)
    registry = PluginRegistry.from_entry_points()
    assert {"echo_search", "second_search"} & set(registry.query_engine_registry().modes) == loaded
    assert "sql_text_search" in registry.query_engine_registry().modes  # core's own plugin always loads


def test_only_loads_just_the_named_plugins_within_heta_load_plugins(site, monkeypatch):
    # what an executor's worker asks for: the one plugin that provides its model
    install_fake_distribution(site, "heta-plugin-one", "plugin_one", GOOD_PLUGIN)
    install_fake_distribution(site, "heta-plugin-two", "plugin_two", SECOND_PLUGIN)
    modes = set(PluginRegistry.from_entry_points(only=["heta-plugin-two"]).query_engine_registry().modes)
    assert "second_search" in modes and "echo_search" not in modes and "sql_text_search" in modes
    monkeypatch.setenv("HETA_LOAD_PLUGINS", "heta-plugin-one")  # the user's choice still holds: nothing of two loads
    assert "second_search" not in PluginRegistry.from_entry_points(only=["heta-plugin-two"]).query_engine_registry().modes


def test_heta_trace_plugins_logs_every_hook_call(site, monkeypatch, capsys):
    install_fake_distribution(site, "heta-plugin-one", "plugin_one", GOOD_PLUGIN)
    install_fake_distribution(site, "heta-plugin-half", "half_plugin", HALF_WAY_PLUGIN)
    PluginRegistry.from_entry_points()
    assert "heta plugin trace" not in capsys.readouterr().err
    monkeypatch.setenv("HETA_TRACE_PLUGINS", "1")
    PluginRegistry.from_entry_points()
    err = capsys.readouterr().err
    assert "heta plugin trace: heta-plugin-one register_query_engines registered ['echo_search'] in" in err
    assert "heta plugin trace: heta-core register_steps registered ['parse_documents'" in err
    assert "heta-plugin-half register_query_engines raised RuntimeError: configuration file missing" in err


def test_inline_plugin_implements_every_hook():
    from heta_framework.common.models import ModelProvider
    from heta_framework.kb.documents import DocumentParser
    from heta_framework.kb.executor import ExecutorType
    from heta_framework.kb.stores import StoreType
    from heta_framework.plugins.registry import CATEGORIES

    class Step:
        name = "inline_step"

        async def run(self, context):
            pass

    class Procedure:
        name = "inline_procedure"

        def expand(self):
            return []

    class Engine:
        mode = "inline_search"
        required_assets = frozenset()

        async def query(self, request, context):
            pass

    things = {
        "steps": [Step],
        "query_engines": [Engine()],
        "stores": [StoreType("inline", "objects", lambda config, root: None)],
        "model_providers": [ModelProvider("inline", frozenset({"embedding"}), lambda config: None)],
        "parsers": [DocumentParser("inline", (".inline",), lambda data, name: None)],
        "procedures": [Procedure],
        "executors": [ExecutorType("inline", lambda config, root: None)],
    }
    assert set(things) == set(CATEGORIES.values())  # a new hook must be added here, and nowhere else in testing/
    registry = make_registry(inline_plugin("everything", **things))
    [info] = [p for p in registry.plugins if p.name == "everything"]
    assert info.registered == {
        "steps": ["inline_step"], "query_engines": ["inline_search"], "stores": ["objects:inline"],
        "model_providers": ["embedding:inline"], "parsers": ["inline"], "procedures": ["inline_procedure"],
        "executors": ["inline"],
    }
    with pytest.raises(TypeError, match="Did you mean 'query_engines'"):
        inline_plugin(query_engine=[Engine()])
