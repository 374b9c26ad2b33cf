"""The helpers of ``make isolation`` and ``make install``: which imports a distribution needs, and uv fed pip's sources."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


imports_used = _load("imports_used").imports_used
uv_install = _load("uv_install")


def _write(folder: Path, relative: str, source: str) -> None:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source), encoding="utf-8")


def test_an_import_inside_a_function_counts_and_one_with_a_fallback_does_not(tmp_path):
    _write(tmp_path, "src/mypkg/__init__.py", """
        import json
        from typing import TYPE_CHECKING
        import numpy as np
        from mypkg import helpers
        from . import sibling

        if TYPE_CHECKING:
            import pandas

        try:
            import tantivy
        except ImportError:
            tantivy = None

        try:
            import ujson
        except (ValueError, ModuleNotFoundError):
            ujson = None

        try:
            import orjson
        except ValueError:
            orjson = None

        def start_cluster():
            import ray.util
            from psycopg import sql
            return ray, sql
    """)
    _write(tmp_path, "tests/conftest.py", "import pytest\nfrom cdp import Browser\n")
    _write(tmp_path, "tests/cdp.py", "import websockets\n")

    assert imports_used(tmp_path) == {"json", "typing", "numpy", "ray", "psycopg", "orjson", "pytest", "websockets"}


def test_a_handler_after_the_try_body_is_still_required(tmp_path):
    # only the try body has the fallback: what the handler itself imports must be there
    _write(tmp_path, "src/mypkg/__init__.py", """
        try:
            import tantivy
        except ImportError:
            import whoosh
    """)
    assert imports_used(tmp_path) == {"whoosh"}


def test_every_distribution_of_the_repo_is_read_without_error():
    folders = [p.parent for pattern in ("core", "heta_plugin_*", "plugins/*") for p in ROOT.glob(f"{pattern}/pyproject.toml")]
    used = {folder.name: imports_used(folder) for folder in folders}
    assert "heta_framework" in used["heta_plugin_vector"] and "faiss" in used["heta_plugin_vector"]
    assert "ray" in used["heta_plugin_ray"]
    # the optional text store is imported with a fallback in its plugin's code, yet the tests import it plainly
    assert "tantivy" in used["heta_plugin_fulltext"]


def test_uv_gets_pip_s_sources_and_constraints(tmp_path, monkeypatch):
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("torch<=2.14.1\n")
    config = tmp_path / "pip.conf"
    config.write_text(
        "[global]\n"
        f"find-links = {tmp_path / 'wheels'}\n"
        "extra-index-url = file:///srv/one/simple file:///srv/two/simple\n"
        f"constraint = {constraints}\n"
        "cert = /etc/ssl/certs/ca-certificates.crt\n"
    )
    for name in ("PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_CONSTRAINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(config))
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple")
    uv_install.pip_sources.cache_clear()
    try:
        options = uv_install.pip_sources()
    finally:
        uv_install.pip_sources.cache_clear()
    pairs = list(zip(options[::2], options[1::2]))
    assert ("--index-url", "https://mirror.example/simple") in pairs
    assert ("--find-links", str(tmp_path / "wheels")) in pairs
    assert ("--extra-index-url", "file:///srv/one/simple") in pairs and ("--extra-index-url", "file:///srv/two/simple") in pairs
    assert ("-c", str(constraints)) in pairs
    assert not any("cert" in part for part in options)  # only what chooses packages is handed over


@pytest.mark.skipif(importlib.util.find_spec("uv") is None, reason="uv is a dev dependency (make install)")
def test_uv_install_command_picks_the_best_version_from_every_source():
    command = uv_install.uv_install_command(sys.executable)
    assert command[1:3] == ["pip", "install"]
    assert command[command.index("--python") + 1] == sys.executable
    # pip's behaviour: the best version from any source, not every version from the first source that has one
    assert command[command.index("--index-strategy") + 1] == "unsafe-best-match"
    # and byte-compiled as pip does (Python does not write .pyc files where PYTHONDONTWRITEBYTECODE is set),
    # unless the caller says otherwise
    assert "--compile-bytecode" in command
    assert "--compile-bytecode" not in uv_install.uv_install_command(sys.executable, compile_bytecode=False)


def _write_package(folder: Path, name: str, init: str, extra: str = "") -> None:
    """A one-module setuptools project: ``name``, version 1.0, its module's ``__init__`` holding ``init``."""
    _write(folder, "pyproject.toml", f"""
        [build-system]
        requires = ["setuptools>=70.1"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "{name}"
        version = "1.0"
        {extra}
    """)
    _write(folder, f"{name.replace('-', '_')}/__init__.py", init)


@pytest.fixture
def check_isolation(monkeypatch):
    """scripts/check_isolation.py, imported as when it runs: its folder on the path (it imports its siblings)."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    return importlib.import_module("check_isolation")


@pytest.mark.skipif(importlib.util.find_spec("uv") is None, reason="uv is a dev dependency (make install)")
def test_an_isolation_venv_has_no_pip_and_uv_still_installs_into_it(check_isolation, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run(check_isolation.venv_command(venv), check=True)
    python = venv / "bin" / "python"
    assert not (venv / "bin" / "pip").exists()
    package = tmp_path / "tiny"
    _write_package(package, "tiny-isolation-probe", "VALUE = 42\n")
    command = check_isolation.installer(python, ROOT / "scripts" / "constraints.txt")
    subprocess.run([*command, str(package)], check=True, env=check_isolation.clean_environment())
    done = subprocess.run([str(python), "-c", "import tiny_isolation_probe as t; print(t.VALUE)"], capture_output=True, text=True)
    assert done.stdout.strip() == "42"


def test_isolation_tests_write_the_bytecode_of_what_they_import(check_isolation, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # as on this machine
    _write(tmp_path, "probe_module.py", "X = 1\n")
    code = "import probe_module"
    for env, written in ((check_isolation.clean_environment(), False), (check_isolation.environment_for_tests(), True)):
        subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, check=True)
        assert any((tmp_path / "__pycache__").glob("probe_module.*.pyc")) == written


def test_wheels_are_built_in_one_process_and_a_broken_one_is_named(monkeypatch, tmp_path):
    build_wheels = _load("build_wheels")
    source = tmp_path / "source"
    _write_package(source / "good-dist", "good-dist", "VALUE = 1\n")
    _write_package(source / "broken-dist", "broken-dist", "", 'dependencies = ["not a requirement !!"]')
    monkeypatch.setattr(build_wheels, "ROOT", source)
    monkeypatch.setattr(build_wheels, "distribution_folders", lambda: {p.name: p for p in sorted(source.iterdir())})

    built = build_wheels.build_all(tmp_path / "wheels", ["good-dist"])
    assert [p.name for p in built.values()] == ["good_dist-1.0-py3-none-any.whl"]
    with pytest.raises(RuntimeError, match="the wheels of broken-dist failed") as failure:
        build_wheels.build_all(tmp_path / "wheels")
    assert "not a requirement" in str(failure.value)  # the backend's own complaint is passed on
    assert (tmp_path / "wheels" / "good_dist-1.0-py3-none-any.whl").is_file()  # the others were still built


def _make_recipe(target: str) -> list[str]:
    """The command lines of ``target`` in the Makefile."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_make_test_runs_every_test_module_of_the_repo_once(check_isolation):
    """make test runs tests/ in the workspace venv and each distribution's tests/ in its own venv (--slow):
    a test module in neither place would never run, and one in both would run twice."""
    assert _make_recipe("test")[-1].split()[-2:] == ["test-workspace", "test-distributions"]
    workspace = _make_recipe("test-workspace")
    assert len(workspace) == 1 and " -m pytest " in workspace[0] and workspace[0].split()[-1] == "tests", workspace
    distributions = _make_recipe("test-distributions")
    assert len(distributions) == 1 and "scripts/check_isolation.py --slow" in distributions[0], distributions

    distribution_tests = {d.folder / "tests" for d in check_isolation.discover()}
    tracked = subprocess.run(["git", "ls-files", "*test_*.py"], cwd=ROOT, capture_output=True, text=True, check=True)
    modules = [ROOT / name for name in tracked.stdout.split() if Path(name).name.startswith("test_")]
    assert modules
    runs = {module: [folder for folder in (*distribution_tests, ROOT / "tests") if module.is_relative_to(folder)]
            for module in modules}
    assert {str(m.relative_to(ROOT)): r for m, r in runs.items() if len(r) != 1} == {}


def test_the_slowest_tests_of_every_distribution_are_gathered_slowest_first(check_isolation, capsys):
    report = textwrap.dedent("""
        ============================= slowest 15 durations =============================
        12.50s call     tests/test_a.py::test_slow_one
        0.75s setup    tests/test_a.py::test_param[vector_search]
        ======================== 3 passed in 14.02s =========================
    """)
    first = check_isolation.slowest_tests(report, "plugins/heta_plugin_a")
    assert first == [(12.5, "call     plugins/heta_plugin_a/tests/test_a.py::test_slow_one"),
                     (0.75, "setup    plugins/heta_plugin_a/tests/test_a.py::test_param[vector_search]")]
    outcomes = [check_isolation.Outcome(distribution=None, slowest=found)
                for found in (first, [(30.0, "call     b/tests/test_b.py::test_b")])]
    check_isolation.print_slowest(outcomes)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "slowest 3 tests over every distribution:"
    assert [line.split()[-1] for line in lines[1:]] == ["b/tests/test_b.py::test_b", "plugins/heta_plugin_a/tests/test_a.py::test_slow_one",
                                                         "plugins/heta_plugin_a/tests/test_a.py::test_param[vector_search]"]
