"""Build a wheel of every distribution in the repository: ``make wheels`` (into ``dist/``).

Heta's distributions are not on the package index yet, so users (and the tests that
install as users do) install them by name from these wheels::

    pip install --find-links dist/ heta-plugin-vector heta-plugin-local

Each wheel is built offline (``--no-build-isolation``, the running Python's setuptools)
from a copy of its folder, so no ``build/`` or ``*.egg-info`` lands in the work tree.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST_GLOBS = ("core", "heta_plugin_*", "plugins/*")
IGNORE = shutil.ignore_patterns("build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".venv", "tests")


def distribution_folders() -> dict[str, Path]:
    """Distribution name -> folder, for every folder of the repository with a pyproject.toml."""
    folders = sorted(p.parent for pattern in DIST_GLOBS for p in ROOT.glob(f"{pattern}/pyproject.toml"))
    return {tomllib.loads((folder / "pyproject.toml").read_text())["project"]["name"]: folder for folder in folders}


def build_all(out: Path, names: Iterable[str] | None = None) -> dict[str, Path]:
    """A wheel of every distribution (or of those ``names``) in ``out``; older wheels of the same names are replaced.

    One pip process builds them all: a pip start per distribution was most of the time.
    """
    folders = distribution_folders()
    if names is not None:
        wanted = {_wheel_prefix(n) for n in names}
        folders = {name: folder for name, folder in folders.items() if _wheel_prefix(name) in wanted}
    out.mkdir(parents=True, exist_ok=True)
    for name in folders:
        for old in out.glob(f"{_wheel_prefix(name)}-*.whl"):
            old.unlink()
    with tempfile.TemporaryDirectory(prefix="heta-wheel-src-") as scratch:
        copies = []
        for folder in folders.values():
            copy = Path(scratch) / folder.relative_to(ROOT)
            shutil.copytree(folder, copy, ignore=IGNORE)
            copies.append(str(copy))
        command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(out), *copies]
        result = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    wheels = {name: sorted(out.glob(f"{_wheel_prefix(name)}-*.whl")) for name in folders}
    missing = [name for name, built in wheels.items() if len(built) != 1]
    if result.returncode != 0 or missing:
        raise RuntimeError(f"building the wheels of {', '.join(missing) or 'the distributions'} failed:\n"
                           f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return {name: built[0] for name, built in wheels.items()}


def _wheel_prefix(name: str) -> str:
    """A wheel file's name starts with the distribution's name, normalised (PEP 427)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="folder for the wheels (default: dist/)")
    args = parser.parse_args()
    for name, wheel in build_all(args.out).items():
        print(f"{name:<24} {wheel.relative_to(ROOT) if wheel.is_relative_to(ROOT) else wheel}")


if __name__ == "__main__":
    main()
