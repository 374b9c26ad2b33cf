#!/usr/bin/env python3
"""Install each distribution of the repo alone, in a fresh virtual environment, and run its own tests there.

The shared ``.venv`` has every distribution installed, so an undeclared
dependency (a plugin importing another plugin, a test needing a library that
only the workspace's dev extra brings) goes unnoticed there. Here, for each
``core/``, ``heta_plugin_*/`` and ``plugins/*/`` folder with a ``pyproject.toml``:

1. a fresh venv (no system site-packages) under ``.isolation/venvs/``;
2. ``torch==2.13.0`` if the distribution (or a repo-local dependency) declares
   torch or sentence-transformers: the pinned CPU build lies on this machine's disk,
   an unpinned torch would pull gigabytes. Every install is also constrained to it;
3. non-editable wheels of heta-core, the distribution (with its ``test`` extra
   if it has one) and the repo-local distributions it declares, plus pytest,
   pytest-asyncio and pytest-timeout, installed by uv from pip's own package
   sources (scripts/uv_install.py; by pip where uv is missing);
4. import its packages from the venv (not from the source tree), check that
   ``PluginRegistry.from_entry_points(strict=True)`` lists its distribution; for
   heta-core alone, check that faiss, whoosh, openai, cohere and torch are
   *not* importable and that it still builds a knowledge base and answers
   ``sql_text_search``;
5. check that every module its source and tests import without a fallback
   (scripts/imports_used.py) can be found there, so an undeclared dependency
   shows even where no test reaches that import;
6. run its own ``tests/`` with that venv's pytest. ``make test`` runs them all
   (``--slow``): this is where each distribution's tests run, once, as tox runs each
   environment's. Without ``--slow`` (``make isolation``, the quick check) the tests
   marked slow are still collected, so every test module and fixture imports there.

Prints a table and the slowest tests of every run, and exits non-zero if any distribution fails.
Usage: ``python scripts/check_isolation.py [--only NAME ...] [--slow] [--keep-venvs] [--jobs N]``
(run with the workspace venv's Python: wheels are built with its setuptools, offline).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".isolation"
#: runs whose logs are kept in .isolation/ (wheels and venvs are removed after each run)
KEPT_RUNS = 3
DIST_GLOBS = ("core", "heta_plugin_*", "plugins/*")
CORE = "heta-core"
TORCH_PIN = "torch==2.13.0"
TORCH_USERS = frozenset({"torch", "sentence-transformers"})
TEST_EXTRAS = ("test", "tests", "testing")
TEST_TOOLS = ("pytest>=8.0", "pytest-asyncio>=0.23", "pytest-timeout>=2.2")
#: started first, longest first, so none starts last and runs alone at the end (measured on 2 cores, three at a
#: time). With --slow (make test): postgres 390 s, ray 341 s, heta-server 309 s, the next 183 s. Without: heta-server
#: 221 s, heta-core 183 s, the next 169 s; heta-core installs no torch, so the torch-first order alone starts it late
LONGEST_CHECKS = {
    True: ("heta-plugin-postgres", "heta-plugin-ray", "heta-server", "heta-core"),
    False: ("heta-server", "heta-core"),
}
#: slowest tests shown after the table, over every distribution's run (as make test's --durations=15 does)
SLOWEST_SHOWN = 15
#: what heta-core must install and work without
NOT_IN_CORE = ("faiss", "whoosh", "openai", "cohere", "torch")
#: the root pyproject's pytest settings that matter, repeated because its testpaths must not apply
PYTEST_OPTIONS = (
    "-p", "no:cacheprovider", "-c", os.devnull, "--import-mode=importlib",
    "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function",
    "-o", "timeout=600", "-W", "error::SyntaxWarning", "-q", "-ra", "--tb=short",
    # the failure, not third-party deprecation warnings, belongs in the last lines this script shows
    "--disable-warnings",
    # each run's slowest, gathered after the table into the slowest of every distribution (slowest_tests)
    f"--durations={SLOWEST_SHOWN}",
)


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return normalize(match.group(1)) if match else ""


@dataclass(frozen=True)
class Distribution:
    folder: Path
    name: str
    packages: tuple[str, ...]
    dependencies: tuple[str, ...]
    test_extra: str | None
    test_dependencies: tuple[str, ...]
    #: registers with Heta (a `heta` entry point, or heta-core's built-in plugin); framework integrations do not
    heta_plugin: bool = True

    @property
    def label(self) -> str:
        return str(self.folder.relative_to(ROOT))

    @property
    def requirement_names(self) -> set[str]:
        return {requirement_name(r) for r in (*self.dependencies, *self.test_dependencies)}


@dataclass(frozen=True)
class RunFolder:
    """Everything one run writes. Each run has its own, so two runs at once cannot delete each other's wheels."""

    path: Path

    @classmethod
    def create(cls) -> RunFolder:
        WORK.mkdir(exist_ok=True)
        path = Path(tempfile.mkdtemp(prefix=time.strftime("run-%Y%m%d-%H%M%S-"), dir=WORK))
        for name in ("wheels", "venvs", "logs"):
            (path / name).mkdir()
        (path / "constraints.txt").write_text(f"{TORCH_PIN}\n", encoding="utf-8")
        return cls(path)

    @property
    def wheels(self) -> Path:
        return self.path / "wheels"

    @property
    def constraints(self) -> Path:
        return self.path / "constraints.txt"

    def venv(self, distribution: Distribution) -> Path:
        return self.path / "venvs" / distribution.folder.name

    def log(self, name: str) -> Path:
        return self.path / "logs" / f"{name}.log"

    def finish(self, keep_venvs: bool) -> None:
        shutil.rmtree(self.wheels, ignore_errors=True)
        if not keep_venvs:
            shutil.rmtree(self.path / "venvs", ignore_errors=True)
        older = sorted(p for p in WORK.glob("run-*") if p.is_dir() and p != self.path)
        for stale in older[: max(0, len(older) - (KEPT_RUNS - 1))]:
            shutil.rmtree(stale, ignore_errors=True)


@dataclass(frozen=True)
class Settings:
    keep_venvs: bool
    #: distributions checked at once
    jobs: int
    #: also run the tests marked slow (make test does)
    slow: bool


@dataclass
class Outcome:
    distribution: Distribution
    local_dependencies: list[str] = field(default_factory=list)
    torch: bool = False
    steps: dict[str, str] = field(default_factory=dict)  # step -> "ok" or a short failure
    tests: str = ""
    seconds: float = 0.0
    details: list[str] = field(default_factory=list)
    #: (seconds, "phase test id") of its slowest tests, from pytest's --durations report
    slowest: list[tuple[float, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(v == "ok" for v in self.steps.values())


def discover() -> list[Distribution]:
    found = []
    for pattern in DIST_GLOBS:
        for folder in sorted(ROOT.glob(pattern)):
            pyproject = folder / "pyproject.toml"
            if not pyproject.is_file():
                continue
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
            extras = project.get("optional-dependencies", {})
            test_extra = next((e for e in TEST_EXTRAS if e in extras), None)
            entry_points = project.get("entry-points", {}).get("heta", {})
            packages = tuple(sorted({value.split(":")[0].split(".")[0] for value in entry_points.values()}))
            if not packages:  # heta-core (its plugin is built in) and framework integrations (no plugin at all)
                packages = import_packages(folder / "src")
            found.append(
                Distribution(
                    folder=folder,
                    name=normalize(project["name"]),
                    packages=packages,
                    dependencies=tuple(project.get("dependencies", ())),
                    test_extra=test_extra,
                    test_dependencies=tuple(extras.get(test_extra, ())) if test_extra else (),
                    heta_plugin=bool(entry_points) or normalize(project["name"]) == CORE,
                )
            )
    return found


def import_packages(src: Path) -> tuple[str, ...]:
    """The regular packages under ``src``, looking inside namespace folders (``llama_index/retrievers/heta``)."""
    found: list[str] = []

    def walk(folder: Path, prefix: str) -> None:
        for child in sorted(p for p in folder.iterdir() if p.is_dir() and p.name.isidentifier()):
            if (child / "__init__.py").exists():
                found.append(prefix + child.name)
            else:  # a PEP 420 namespace folder shared with other distributions
                walk(child, f"{prefix}{child.name}.")

    walk(src, "")
    return tuple(found)


def local_closure(distribution: Distribution, by_name: dict[str, Distribution]) -> list[Distribution]:
    """The repo's other distributions that ``distribution`` declares (its test extra included), transitively."""
    seen: dict[str, Distribution] = {}
    pending = [distribution]
    while pending:
        current = pending.pop()
        for name in sorted(current.requirement_names):
            if name in by_name and name not in seen and name not in (CORE, distribution.name):
                seen[name] = by_name[name]
                pending.append(by_name[name])
    return sorted(seen.values(), key=lambda d: d.name)


def clean_environment() -> dict[str, str]:
    """The caller's environment minus anything that would leak the shared venv into a fresh one."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PIP_REQUIRE_VIRTUALENV")}
    env.update(PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return env


def run(command: list[str], log: Path, *, cwd: Path = WORK, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"\n$ {' '.join(command)}\n")
        handle.flush()
        started = time.perf_counter()
        result = subprocess.run(command, cwd=cwd, env=env or clean_environment(), text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        handle.write(result.stdout)
        handle.write(f"# exit {result.returncode} after {time.perf_counter() - started:.1f}s\n")
    return result


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def build_wheels(distributions: list[Distribution], folder: RunFolder) -> dict[str, Path]:
    """One wheel per distribution, built as ``make wheels`` builds them (scripts/build_wheels.py), in one pip process."""
    from build_wheels import build_all

    try:
        return {normalize(name): wheel for name, wheel in build_all(folder.wheels, [d.name for d in distributions]).items()}
    except RuntimeError as exc:
        raise SystemExit(str(exc)) from None


def installer(python: Path, constraints: Path) -> list[str]:
    """The command that installs into the venv of ``python``: uv's when the workspace has it, else pip's.

    The same resolution either way (the same requirements, constraints and package sources,
    scripts/uv_install.py); uv installs a plugin's set in about 6 s where pip takes 35, and the
    check installs 24 such sets.
    """
    from uv_install import uv_install_command

    # not byte-compiled: compiling all of a torch user's venv took 150 s; its tests write the bytecode of what they
    # import instead (environment_for_tests)
    command = uv_install_command(python, compile_bytecode=False) or [str(python), "-m", "pip", "install", "--quiet", "--no-compile"]
    return [*command, "-c", str(constraints)]


def venv_command(venv: Path) -> list[str]:
    """A fresh venv; without pip when uv installs into it (ensurepip took 10-13 s of each check, 24 times)."""
    from uv_install import uv_binary

    without_pip = ["--without-pip"] if uv_binary() else []
    return [sys.executable, "-m", "venv", *without_pip, str(venv)]


def environment_for_tests() -> dict[str, str]:
    """Where the tests run: as clean_environment, and Python writes the bytecode of what it imports.

    The venvs are installed without compiling (see installer), and where PYTHONDONTWRITEBYTECODE is set (this
    machine) every test process, the subprocesses the tests start included, would compile torch and transformers
    again: the first one writes their bytecode, the rest read it.
    """
    env = clean_environment()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


CHECK_SCRIPT = textwrap.dedent(
    """
    import importlib, importlib.util, json, sys
    from pathlib import Path

    packages, distribution, forbidden, heta_plugin, used = json.loads(sys.argv[1])
    problems = []
    missing = sorted(name for name in used if importlib.util.find_spec(name) is None)
    if missing:
        problems.append("its code imports " + ", ".join(missing) + " without a fallback, and its venv has none of them: "
                        "declare the distributions that provide them (dependencies, or the test extra for tests/)")
    for name in packages:
        module = importlib.import_module(name)
        if module.__file__ is None:  # a folder without __init__.py became a namespace package
            problems.append(f"{name} is a namespace package (no __init__.py in the wheel?): {list(module.__path__)}")
            continue
        where = Path(module.__file__).resolve()
        if not where.is_relative_to(Path(sys.prefix).resolve()):
            problems.append(f"{name} imported from {where}, not from the venv")
    from heta_framework.plugins.registry import PluginRegistry
    registry = PluginRegistry.from_entry_points(strict=True)
    distributions = sorted({p.distribution for p in registry.plugins})
    if heta_plugin and distribution not in distributions:
        problems.append(f"{distribution} not discovered through its entry point; found {distributions}")
    importable = []
    for name in forbidden:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
        importable.append(name)
    if importable:
        problems.append("importable but must not be installed with heta-core alone: " + ", ".join(importable))
    if forbidden:  # heta-core alone: it must still build a knowledge base and answer sql_text_search
        import asyncio, tempfile
        from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument

        async def sql_text_search():
            steps = [{"step": "parse_documents"}, {"step": "split_documents"}, {"step": "persist_chunks"}]
            with tempfile.TemporaryDirectory() as folder:
                kb = KnowledgeBase.create(Path(folder) / "kb", Recipe.from_dict({"steps": steps}, registry), registry=registry)
                await kb.build([
                    SourceDocument(text="Penicillin was discovered by Alexander Fleming in 1928.", id="fleming"),
                    SourceDocument(text="Whales are marine mammals that breathe air.", id="whales"),
                ])
                response = await kb.query("who discovered penicillin", mode="sql_text_search")
                kb.close()
                return [r.document_id for r in response.results]

        found = asyncio.run(sql_text_search())
        if found != ["fleming"]:
            problems.append(f"sql_text_search with heta-core alone returned {found}, expected ['fleming']")
    print(json.dumps({"problems": problems, "plugins": distributions}))
    """
)


def check(distribution: Distribution, everything: list[Distribution], wheels: dict[str, Path], folder: RunFolder, settings: Settings) -> Outcome:
    by_name = {d.name: d for d in everything}
    outcome = Outcome(distribution)
    started = time.perf_counter()
    local = local_closure(distribution, by_name)
    outcome.local_dependencies = [d.name for d in local]
    outcome.torch = is_torch_user(distribution, by_name)
    venv = folder.venv(distribution)
    log = folder.log(distribution.folder.name)
    log.write_text(f"# {distribution.name} ({distribution.label})\n", encoding="utf-8")
    shutil.rmtree(venv, ignore_errors=True)
    python = venv / "bin" / "python"
    constraints = folder.constraints
    try:
        result = run(venv_command(venv), log)
        if result.returncode != 0:
            outcome.steps["venv"] = "failed"
            outcome.details.append(tail(result.stdout))
            return outcome
        own = str(wheels[distribution.name]) + (f"[{distribution.test_extra}]" if distribution.test_extra else "")
        # core itself is "own" when it is the distribution under test, so its test extra is installed too
        requirements = [own if distribution.name == CORE else str(wheels[CORE]), *([own] if distribution.name != CORE else []), *(str(wheels[d.name]) for d in local)]
        # the pinned torch asked for by name: of the builds of that version, the CPU one on this machine's disk
        # (2.13.0+cpu, in pip's find-links) ranks first, so nothing pulls the CUDA build
        result = run([*installer(python, constraints), *([TORCH_PIN] if outcome.torch else []), *requirements, *TEST_TOOLS], log)
        if result.returncode != 0:
            outcome.steps["install"] = "failed"
            outcome.details.append(tail(result.stdout))
            return outcome
        outcome.steps["install"] = "ok"

        forbidden = list(NOT_IN_CORE) if distribution.name == CORE else []
        # -I: nothing from the current folder or PYTHON* variables can stand in for the installed package
        check_input = [list(distribution.packages), distribution.name, forbidden, distribution.heta_plugin, third_party_imports(distribution)]
        result = run([str(python), "-I", "-c", CHECK_SCRIPT, json.dumps(check_input)], log)
        report = _last_json(result.stdout)
        if result.returncode != 0 or report is None:
            outcome.steps["import"] = "failed"
            outcome.details.append(tail(result.stdout))
        elif report["problems"]:
            outcome.steps["import"] = "failed"
            outcome.details.extend(report["problems"])
        else:
            outcome.steps["import"] = "ok"

        tests = distribution.folder / "tests"
        if not tests.is_dir():
            outcome.steps["tests"] = "no tests/"
            return outcome
        command = [str(python), "-P", "-m", "pytest", str(tests), "--rootdir", str(distribution.folder), *PYTEST_OPTIONS]
        if not settings.slow:  # still collected, so their modules and fixtures import here (make test runs them)
            command += ["-m", "not slow"]
        result = run(command, log, cwd=distribution.folder, env=environment_for_tests())
        outcome.tests = _pytest_summary(result.stdout)
        outcome.slowest = slowest_tests(result.stdout, distribution.label)
        # pytest's 5 is "no tests ran": fine when every test was deselected as slow, and collected without error
        passed = result.returncode == 0 or (result.returncode == 5 and not settings.slow and "deselected" in outcome.tests)
        outcome.steps["tests"] = "ok" if passed else f"exit {result.returncode}"
        if not passed:
            outcome.details.append(tail(result.stdout, 25))
        return outcome
    finally:
        outcome.seconds = time.perf_counter() - started
        if not settings.keep_venvs:
            shutil.rmtree(venv, ignore_errors=True)


def third_party_imports(distribution: Distribution) -> list[str]:
    """What the distribution's source and tests import without a fallback (scripts/imports_used.py), less the
    standard library, and less what the workspace venv cannot find either (modules a test writes for itself)."""
    from imports_used import imports_used

    names = imports_used(distribution.folder) - set(sys.stdlib_module_names)
    return sorted(name for name in names if importlib.util.find_spec(name) is not None)


def _last_json(text: str) -> dict | None:
    for line in reversed(text.strip().splitlines()):
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            continue
    return None


def _pytest_summary(text: str) -> str:
    """pytest's closing line without decorations: ``12 passed, 1 skipped in 3.2s``."""
    for line in reversed(text.strip().splitlines()):
        if re.search(r"\b(passed|failed|error|errors|deselected|no tests ran)\b", line):
            return line.strip("= ").strip()
    return ""


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s+(setup|call|teardown)\s+(\S.*)$")


def slowest_tests(text: str, label: str) -> list[tuple[float, str]]:
    """pytest's ``--durations`` lines in ``text`` as ``(seconds, "call folder/tests/test_x.py::test_y")``."""
    found = []
    for line in text.splitlines():
        match = _DURATION.match(line)
        if match:
            found.append((float(match.group(1)), f"{match.group(2):8} {label}/{match.group(3).strip()}"))
    return found


def print_slowest(outcomes: list[Outcome]) -> None:
    slowest = sorted((entry for o in outcomes for entry in o.slowest), reverse=True)[:SLOWEST_SHOWN]
    if slowest:
        print(f"\nslowest {len(slowest)} tests over every distribution:")
        for seconds, test in slowest:
            print(f"{seconds:8.2f}s {test}")


def print_table(outcomes: list[Outcome]) -> None:
    header = ("distribution", "folder", "repo-local deps", "torch", "install", "import+entry point", "tests", "result", "seconds")
    rows = [
        (
            o.distribution.name,
            o.distribution.label,
            ", ".join(o.local_dependencies) or "-",
            "yes" if o.torch else "-",
            o.steps.get("install", "-"),
            o.steps.get("import", "-"),
            (o.tests or o.steps.get("tests", "-")),
            "PASS" if o.ok else "FAIL",
            f"{o.seconds:.0f}",
        )
        for o in outcomes
    ]
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    line = "+".join("-" * (w + 2) for w in widths)
    print(f"\n+{line}+")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print(f"+{line}+")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")
    print(f"+{line}+")


def check_all(selected: list[Distribution], everything: list[Distribution], folder: RunFolder, settings: Settings) -> list[Outcome]:
    by_name = {d.name: d for d in everything}
    needed = {CORE: by_name[CORE]} | {d.name: d for d in selected}
    for distribution in selected:
        needed |= {d.name: d for d in local_closure(distribution, by_name)}
    print(f"building {len(needed)} wheel(s) into {folder.path.relative_to(ROOT)} ...", flush=True)
    wheels = build_wheels(list(needed.values()), folder)
    from uv_install import uv_binary

    uv_binary()  # found once here: the checks' threads then share the answer (see uv_binary)

    def check_one(distribution: Distribution) -> Outcome:
        outcome = check(distribution, everything, wheels, folder, settings)
        status = "ok" if outcome.ok else "FAILED: " + "; ".join(f"{k} {v}" for k, v in outcome.steps.items() if v != "ok")
        log = folder.log(distribution.folder.name).relative_to(ROOT)
        print(f"{distribution.name} ({distribution.label}): {status} ({outcome.seconds:.0f}s; log {log})", flush=True)
        return outcome

    # each check is its own venv, wheels and log, so they run side by side; the longest first, so the last
    # one to start is a short one (a torch user installs and tests for minutes, a small plugin for seconds)
    longest = LONGEST_CHECKS[settings.slow]
    order = sorted(selected, key=lambda d: (longest.index(d.name) if d.name in longest else len(longest),
                                            not is_torch_user(d, by_name)))
    print(f"checking {len(order)} distribution(s), {settings.jobs} at a time ...", flush=True)
    with ThreadPoolExecutor(max_workers=settings.jobs) as pool:
        done = dict(zip(order, pool.map(check_one, order)))
    return [done[d] for d in selected]


def is_torch_user(distribution: Distribution, by_name: dict[str, Distribution]) -> bool:
    local = local_closure(distribution, by_name)
    return bool(set().union(distribution.requirement_names, *(d.requirement_names for d in local)) & TORCH_USERS)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=(), help="distribution names or folders to check (default: all)")
    parser.add_argument("--keep-venvs", action="store_true", help="leave each venv in .isolation/venvs/ for debugging")
    parser.add_argument("--slow", action="store_true",
                        help="also run the tests marked slow (make test does; without it they are only collected, so they import)")
    # one more than cores, as make test does: much of a check is pip waiting on files (on 2 cores, 3 at once took
    # 776 s where 2 took 841 s)
    parser.add_argument("--jobs", type=int, default=(os.cpu_count() or 1) + 1, help="distributions checked at once (default: cores + 1)")
    args = parser.parse_args()

    everything = discover()
    wanted = {normalize(n) for n in args.only} | {n.rstrip("/") for n in args.only}
    selected = [d for d in everything if not args.only or d.name in wanted or d.label in wanted]
    if not selected:
        print(f"no distribution matches {args.only}; found: {', '.join(d.name for d in everything)}", file=sys.stderr)
        return 2
    if args.jobs > 1:
        # the checks' test runs share the cores: one OpenMP thread each instead of every core each
        os.environ.setdefault("OMP_NUM_THREADS", "1")
    folder = RunFolder.create()
    started = time.perf_counter()
    try:
        outcomes = check_all(selected, everything, folder, Settings(args.keep_venvs, max(1, args.jobs), args.slow))
    finally:
        folder.finish(args.keep_venvs)

    print_table(outcomes)
    print_slowest(outcomes)
    for outcome in outcomes:
        if outcome.local_dependencies:
            print(f"{outcome.distribution.name}: also installed its repo-local dependencies {', '.join(outcome.local_dependencies)} from their folders")
    failures = [o for o in outcomes if not o.ok]
    for outcome in failures:
        print(f"\n--- {outcome.distribution.name} ({outcome.distribution.label}) failed:")
        for detail in outcome.details:
            print(textwrap.indent(detail, "    "))
    print(f"\nisolation check of {len(outcomes)} distribution(s) took {time.perf_counter() - started:.0f}s")
    print(f"isolation: {len(outcomes) - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
