"""Plugins as users get them: wheels, pip-installed by name into a clean venv.

Every distribution's wheel is built into one folder (offline, without build isolation)
and ``pip install --find-links WHEELS heta-plugin-example`` installs the plugin by name,
so pip itself must choose our core: the package index also holds an unrelated
``heta-framework`` that a plugin depending on that name would pull in. A resolution
of every other plugin at once checks the same. Third-party dependencies come from
the package registry through pip's usual configuration and cache.

No editable installs, no source tree on the path, no in-process registration:
Heta must find ``heta-plugin-example`` through its ``heta`` entry point alone,
keep ``title_search`` unavailable until a recipe runs ``index_titles``, and
answer it afterwards. Takes a minute or two.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ROOT / "examples" / "documents"

def _load_script(name: str):
    """A module of scripts/: build_wheels is the script behind `make wheels` (the same wheels users install)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_wheels = _load_script("build_wheels")
uv_install = _load_script("uv_install")
#: every distribution of the repository: name -> folder
DISTRIBUTIONS = build_wheels.distribution_folders()
WHEELS = "wheels"

# pip, venv creation and the two builds take most of a minute; leave room on a busy machine
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

RECIPE_WITHOUT_TITLES = """
[[steps]]
step = "parse_documents"

[[steps]]
step = "split_documents"

[[steps]]
step = "persist_chunks"
"""

RECIPE_WITH_TITLES = """
[[steps]]
step = "parse_documents"

[[steps]]
step = "split_documents"

[[steps]]
step = "index_titles"
"""

# Runs inside the fresh venv. It uses only what a user's program would: the default registry
# (entry points), recipes from TOML, KnowledgeBase.
SCENARIO = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path

    import heta_plugin_example
    from heta_framework.kb import KnowledgeBase, Recipe
    from heta_framework.plugins.registry import PluginRegistry

    work, documents = Path(sys.argv[1]), Path(sys.argv[2])

    async def build(name):
        registry = PluginRegistry.from_entry_points(strict=True)
        recipe = Recipe.from_toml((work / f"{name}.toml").read_text(), registry)
        kb = KnowledgeBase.create(work / name, recipe)  # no registry passed: found through entry points
        report = await kb.build([documents])
        return kb, report

    async def main():
        without, _ = await build("without_titles")
        with_titles, report = await build("with_titles")
        response = await with_titles.query("who discovered penicillin", mode="title_search", top_k=3)
        print(json.dumps({
            "plugin_file": heta_plugin_example.__file__,
            "prefix": sys.prefix,
            "without_titles": {
                "available": without.available_queries,
                "unavailable": without.unavailable_queries().get("title_search"),
            },
            "with_titles": {
                "documents": report.document_count,
                "available": with_titles.available_queries,
                "results": [
                    {"name": r.metadata["name"], "matched": r.metadata["matched_text"], "source": r.metadata["source"],
                     "start": r.metadata["start"], "end": r.metadata["end"], "text": r.text}
                    for r in response.results
                ],
            },
        }))

    asyncio.run(main())
    """
)


def clean_environment() -> dict[str, str]:
    """This process's environment (pip's configuration included) minus what would leak the workspace venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1", COLUMNS="200")
    return env


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(command, cwd=cwd, env=env or clean_environment(), text=True, capture_output=True)
    assert result.returncode == 0, f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """A scratch folder with every distribution's wheel in ``wheels/``."""
    folder = tmp_path_factory.mktemp("wheels")
    build_wheels.build_all(folder / WHEELS)
    return folder


@pytest.fixture(scope="module")
def venv(work) -> Path:
    """A fresh venv (no system site-packages) where pip installed heta-plugin-example by name from the wheels.

    With core's ``documents`` extra, as a user with Word files does (the bundled documents hold one).
    """
    folder = work / "venv"
    run([sys.executable, "-m", "venv", str(folder)], work)
    install = ["install", "--quiet", "--find-links", str(work / WHEELS), "heta-plugin-example", "heta-core[documents]"]
    run([str(folder / "bin" / "python"), "-m", "pip", *install], work)
    return folder


def test_pip_chooses_our_core_for_the_plugin(venv, work, tmp_path):
    freeze = run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"], tmp_path)
    installed = {p["name"].lower(): p["version"] for p in json.loads(freeze)}
    core_version = tomllib.loads((ROOT / "core" / "pyproject.toml").read_text())["project"]["version"]
    assert installed["heta-core"] == core_version
    assert "heta-framework" not in installed  # the unrelated project of that name on the index
    probe = "import heta_framework, heta_framework.distribution as d; d.check_core_distribution(); print(heta_framework.__file__)"
    where = run([str(venv / "bin" / "python"), "-c", probe], tmp_path).strip()
    assert Path(where).is_relative_to(venv)
    versions = dict(line.split(" ", 1) for line in run([str(venv / "bin" / "heta"), "--version"], tmp_path).splitlines())
    assert versions["heta-core"] == core_version and "heta-plugin-example" in versions


@pytest.mark.skipif(uv_install.uv_binary() is None, reason="uv is a dev dependency (make install)")
def test_every_plugin_resolves_to_our_core(work, tmp_path):
    """A resolution of every plugin at once, against the index plus our wheels, picks each plugin and heta-core
    from our wheels, never the index's unrelated ``heta-framework``.

    One resolution for all of them: they must install together (a user picks several), and a plugin that
    depended on the wrong core, or on a version of ours no wheel has, fails it as it would fail alone. It is uv's
    resolver, given pip's own package sources (scripts/uv_install.py, as ``make install`` does): what it checks
    is our wheels' metadata, which any resolver reads alike, and uv resolves the 216 packages in 4 s where pip's
    dry run took 100-125 s. pip itself chooses our core in test_pip_chooses_our_core_for_the_plugin.
    """
    plugins = sorted(name for name in DISTRIBUTIONS if name not in ("heta-core", "heta-plugin-example"))
    requirements = tmp_path / "requirements.in"
    requirements.write_text("\n".join(plugins) + "\n")
    lock = tmp_path / "pylock.toml"  # PEP 751: every chosen package with the file it comes from
    run([uv_install.uv_binary(), "pip", "compile", "--quiet", "--index-strategy", "unsafe-best-match", *uv_install.pip_sources(),
         "--find-links", str(work / WHEELS), "--python-version", f"{sys.version_info.major}.{sys.version_info.minor}",
         "-o", str(lock), str(requirements)], tmp_path)
    chosen = {package["name"].lower(): [wheel["url"] for wheel in package.get("wheels", [])]
              for package in tomllib.loads(lock.read_text())["packages"]}
    assert "heta-framework" not in chosen
    ours = (work / WHEELS).resolve().as_uri()
    from_our_wheels = {name: [url.startswith(ours) for url in chosen.get(name, [])] for name in [*plugins, "heta-core"]}
    assert from_our_wheels == dict.fromkeys([*plugins, "heta-core"], [True])


def test_installed_wheel_is_found_through_its_entry_point(venv, tmp_path):
    freeze = run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=json"], tmp_path)
    installed = {p["name"].lower(): p for p in json.loads(freeze)}
    assert "heta-plugin-example" in installed and "heta-core" in installed
    assert "heta-framework" not in installed
    assert "editable_project_location" not in installed["heta-plugin-example"]
    assert not {"faiss-cpu", "whoosh-reloaded", "openai", "cohere", "torch"} & set(installed)

    plugins = json.loads(run([str(venv / "bin" / "heta"), "plugins", "--strict", "--json"], tmp_path))
    [example] = [p for p in plugins["plugins"] if p["distribution"] == "heta-plugin-example"]
    assert example["registers"] == {"steps": ["index_titles"], "query_engines": ["title_search"]}
    assert plugins["failed"] == []


def test_title_search_appears_only_with_its_step_and_answers(venv, tmp_path):
    (tmp_path / "without_titles.toml").write_text(RECIPE_WITHOUT_TITLES)
    (tmp_path / "with_titles.toml").write_text(RECIPE_WITH_TITLES)
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    output = run([str(venv / "bin" / "python"), str(script), str(tmp_path), str(DOCUMENTS)], tmp_path)
    report = json.loads(output.strip().splitlines()[-1])

    assert Path(report["plugin_file"]).is_relative_to(report["prefix"])  # the wheel, not the source tree

    assert "title_search" not in report["without_titles"]["available"]
    assert "sql_text_search" in report["without_titles"]["available"]
    assert report["without_titles"]["unavailable"] == ["asset title_index is not built"]

    assert report["with_titles"]["documents"] == 52
    assert "title_search" in report["with_titles"]["available"]
    [first, *rest] = report["with_titles"]["results"]
    assert (first["name"], first["matched"]) == ("penicillin.md", "Penicillin")
    assert Path(first["source"]) == (DOCUMENTS / "life" / "penicillin.md").resolve()
    assert first["start"] == 0 and first["text"].startswith("# Penicillin")
    assert "penicillin-notes.docx" in [r["name"] for r in rest]

    modes = run([str(venv / "bin" / "heta"), "--kb", str(tmp_path / "with_titles"), "modes"], tmp_path)
    row = next(line for line in modes.splitlines() if "title_search" in line)
    assert "available" in row and "unavailable" not in row and "heta-plugin-example" in row
    unavailable = run([str(venv / "bin" / "heta"), "--kb", str(tmp_path / "without_titles"), "modes"], tmp_path)
    assert "asset title_index is not built" in next(line for line in unavailable.splitlines() if "title_search" in line)
