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
