"""Distributions meet only through public API: no first-party distribution imports another one's private
(``_name``) modules or names, core included, so each can change its internals without breaking the others.

The walk reads every ``.py`` file under each distribution's ``src/`` with ``ast`` (nothing is imported),
maps each imported module to the distribution that ships it, and lists the imports that cross a
distribution boundary into a name or module that starts with one underscore.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTIONS = sorted(p.parent for p in [ROOT / "core" / "pyproject.toml", *ROOT.glob("heta_plugin_*/pyproject.toml"),
                                          *ROOT.glob("plugins/*/pyproject.toml")])


@attrs.frozen
class Import:
    path: Path
    line: int
    module: str  # the dotted module imported from
    names: tuple[str, ...]  # names taken from it (empty for ``import module``)

    def __str__(self) -> str:
        taken = f" ({', '.join(self.names)})" if self.names else ""
        where = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{where}:{self.line}: {self.module}{taken}"


def is_private(part: str) -> bool:
    return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))


def packages_of(distribution: Path) -> set[str]:
    """Top-level import names the distribution ships (``src/<name>/`` or ``src/<name>.py``); a namespace
    package (``llama_index``) counts by its full path inside the distribution."""
    src = distribution / "src"
    names: set[str] = set()
    for init in src.rglob("__init__.py"):
        package = init.parent.relative_to(src)
        if not (src / package.parts[0] / "__init__.py").exists():  # namespace root: claim the deepest package
            names.add(".".join(package.parts))
        else:
            names.add(package.parts[0])
    names.update(p.stem for p in src.glob("*.py"))
    return {n for n in names if not n.endswith(".egg-info")}


def owner(module: str, owners: dict[str, Path]) -> Path | None:
    candidates = [name for name in owners if module == name or module.startswith(name + ".")]
    return owners[max(candidates, key=len)] if candidates else None


def imports_in(path: Path, package: str) -> list[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [Import(path, node.lineno, alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: resolve against the file's package (never crosses a distribution)
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, *([module] if module else [])])
            found.append(Import(path, node.lineno, module, tuple(alias.name for alias in node.names)))
    return found


def crossing_private_imports() -> list[Import]:
    owners = {name: dist for dist in DISTRIBUTIONS for name in packages_of(dist)}
    offenders: list[Import] = []
    for dist in DISTRIBUTIONS:
        src = dist / "src"
        for path in sorted(src.rglob("*.py")):
            if ".egg-info" in str(path):
                continue
            package = ".".join(path.relative_to(src).with_suffix("").parts[:-1])
            for found in imports_in(path, package):
                target = owner(found.module, owners)
                if target is None or target == dist:
                    continue
                if any(is_private(part) for part in found.module.split(".")) or any(is_private(n) for n in found.names):
                    offenders.append(found)
    return offenders


def test_every_distribution_ships_a_package():
    assert len(DISTRIBUTIONS) >= 10
    for dist in DISTRIBUTIONS:
        assert packages_of(dist), f"{dist.relative_to(ROOT)} has no package under src/"


def test_no_distribution_imports_another_ones_private_modules_or_names():
    offenders = crossing_private_imports()
    assert not offenders, "import public API instead (or make the thing public in its own distribution):\n" + "\n".join(
        map(str, offenders)
    )


@pytest.mark.parametrize(
    ("source", "private"),
    [
        ("from heta_framework.kb._catalog import load", True),
        ("from heta_framework.kb.recipe import _converter", True),
        ("import heta_framework._internal.tools", True),
        ("from heta_framework.kb.recipe import Recipe, __version__", False),
        ("from heta_plugin_example import _own_helper", False),  # inside its own distribution
        ("from ._local import thing", False),
    ],
)
def test_the_walk_finds_what_it_should(tmp_path, monkeypatch, source, private):
    """The detector itself, on a throwaway distribution beside the real ones."""
    fake = tmp_path / "plugins" / "heta_plugin_example_copy"
    (fake / "src" / "heta_plugin_example").mkdir(parents=True)
    (fake / "src" / "heta_plugin_example" / "__init__.py").write_text("")
    (fake / "src" / "heta_plugin_example" / "probe.py").write_text(source + "\n")
    monkeypatch.setitem(globals(), "DISTRIBUTIONS", [ROOT / "core", fake])
    found = [i for i in crossing_private_imports() if i.path.name == "probe.py"]
    assert bool(found) == private, found


def _pyproject(dist: Path) -> dict:
    import tomllib

    return tomllib.loads((dist / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_distribution_has_the_one_layout(dist):
    """pyproject.toml, src/<package>/ with py.typed (listed in package-data), tests/, README.md."""
    project = _pyproject(dist)
    assert (dist / "tests").is_dir(), f"{dist.relative_to(ROOT)} has no tests/"
    assert project["project"].get("readme") == "README.md" and (dist / "README.md").is_file()
    package_data = project.get("tool", {}).get("setuptools", {}).get("package-data", {})
    for package in packages_of(dist):
        folder = dist / "src" / package.replace(".", "/")
        assert (folder / "py.typed").is_file(), f"{folder.relative_to(ROOT)} has no py.typed"
        assert "py.typed" in package_data.get(package, []), f"{dist.name}: package-data must list py.typed for {package}"


# --- no import cycle, and core in layers ------------------------------------------------------------
#
# Every import counts, the ones under ``if TYPE_CHECKING:`` and inside functions too: a reader follows
# them all, and a cycle hidden behind a lazy import is still a cycle in the design.

#: core's layers, bottom first: a module may import from its own layer and those below it. Packages in
#: one layer are independent of each other (the builtin plugin and the runtime never import each other).
#: docs/architecture.md draws the same table.
CORE_LAYERS: tuple[tuple[str, ...], ...] = (
    ("heta_framework", "heta_framework.errors", "heta_framework.distribution", "heta_framework.common", "heta_framework.text"),
    ("heta_framework.contracts",),
    ("heta_framework.plugins",),
    ("heta_framework.builtin", "heta_framework.runtime"),
    ("heta_framework.kb.parts",),
    ("heta_framework.kb",),
    ("heta_framework.evaluation", "heta_framework.testing", "heta_framework.reference"),
    ("heta_framework.cli",),
)


def modules_of(dist: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module the distribution ships (a package by its ``__init__``)."""
    src = dist / "src"
    found = {}
    for path in src.rglob("*.py"):
        if ".egg-info" in str(path):
            continue
        parts = path.relative_to(src).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def module_graph(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """module -> {imported module of the same distribution -> line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = graph.setdefault(name, {})
        for found in imports_in(path, package):
            # ``from package import name`` imports the submodule when there is one, else the package
            targets = [f"{found.module}.{n}" if f"{found.module}.{n}" in modules else found.module for n in found.names] or [found.module]
            for target in targets:
                while target and target not in modules:  # ``import a.b.c`` of a name inside a.b
                    target = target.rpartition(".")[0]
                if target and target != name:
                    edges.setdefault(target, found.line)
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One shortest cycle (``[a, b, ..., a]``) in each strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    cycles = []
    for group in groups:
        start = min(group)
        paths, seen = [[start]], {start}
        while paths:  # breadth first inside the group: the shortest way back to start
            path = paths.pop(0)
            for nxt in sorted(graph[path[-1]]):
                if nxt == start:
                    cycles.append([*path, start])
                    paths = []
                    break
                if nxt in group and nxt not in seen:
                    seen.add(nxt)
                    paths.append([*path, nxt])
    return cycles


def describe_cycle(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: str(d.relative_to(ROOT)))
def test_no_import_cycle_between_modules(dist):
    graph = module_graph(modules_of(dist))
    cycles = import_cycles(graph)
    assert not cycles, "modules that import each other (break the cycle: move the shared part down, or take a protocol):\n" + "\n".join(
        describe_cycle(c, graph) for c in cycles
    )


def layer_of(module: str) -> tuple[int, str] | None:
    """(layer number, the package or module of ``CORE_LAYERS`` that holds ``module``), the most specific one."""
    best = None
    for number, members in enumerate(CORE_LAYERS):
        for member in members:
            if (module == member or module.startswith(member + ".")) and (best is None or len(member) > len(best[1])):
                best = (number, member)
    return best


def test_core_modules_import_only_their_layer_and_below():
    graph = module_graph(modules_of(ROOT / "core"))
    unplaced = sorted(m for m in graph if layer_of(m) is None or layer_of(m) == (0, "heta_framework") and m != "heta_framework")
    assert not unplaced, f"modules in no layer of CORE_LAYERS (add their package): {unplaced}"
    upward = []
    for module, edges in graph.items():
        (own, own_member) = layer_of(module)
        for target, line in edges.items():
            (theirs, their_member) = layer_of(target)
            if theirs > own or (theirs == own and their_member != own_member and own > 0):
                upward.append(f"{modules_of(ROOT / 'core')[module].relative_to(ROOT)}:{line}: {module} imports {target}")
    assert not upward, "an import that goes up a layer (or across to a sibling package of the same layer):\n" + "\n".join(upward)


def test_the_cycle_finder_names_a_cycle(tmp_path):
    """The guard itself, on a throwaway package: a TYPE_CHECKING import closes the cycle."""
    package = tmp_path / "src" / "loop"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from loop.b import B\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from loop import c\n")
    (package / "c.py").write_text("def f():\n    from .a import A\n")
    (package / "d.py").write_text("from loop import a\n")  # into the cycle, not part of it
    graph = module_graph(modules_of(tmp_path))
    assert import_cycles(graph) == [["loop.a", "loop.b", "loop.c", "loop.a"]]
    assert describe_cycle(["loop.a", "loop.b", "loop.c", "loop.a"], graph) == (
        "loop.a (line 1) -> loop.b (line 3) -> loop.c (line 2) -> loop.a"
    )
    (package / "c.py").write_text("")
    assert import_cycles(module_graph(modules_of(tmp_path))) == []
