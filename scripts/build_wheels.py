"""Build a wheel of every distribution in the repository: ``make wheels`` (into ``dist/``).

Heta's distributions are not on the package index yet, so users (and the tests that
install as users do) install them by name from these wheels::

    pip install --find-links dist/ heta-plugin-vector heta-plugin-local

Each wheel is built offline (no build isolation: the running Python's setuptools) from a
copy of its folder, so no ``build/`` or ``*.egg-info`` lands in the work tree.
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


# Runs in one fresh interpreter: each folder's PEP 517 backend (its pyproject's build-backend) builds its wheel
# there, one after the other. pip ran three hook processes per distribution: 72 s for the 24 wheels, where this
# takes 11 s, and the wheels are byte for byte the same.
_BUILDER = """
import contextlib, importlib, io, os, sys, tomllib
out, folders = sys.argv[1], sys.argv[2:]
failed = 0
for folder in folders:  # a failure is reported and the others are still built
    os.chdir(folder)
    log = io.StringIO()
    try:
        with open("pyproject.toml", "rb") as handle:
            backend = importlib.import_module(tomllib.load(handle)["build-system"]["build-backend"])
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            backend.build_wheel(out)
    except (Exception, SystemExit) as exc:
        failed += 1
        sys.stderr.write(f"building {folder} failed: {exc!r}\\n{log.getvalue()[-2000:]}\\n")
sys.exit(1 if failed else 0)
"""


def build_all(out: Path, names: Iterable[str] | None = None) -> dict[str, Path]:
    """A wheel of every distribution (or of those ``names``) in ``out``; older wheels of the same names are replaced."""
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
        command = [sys.executable, "-c", _BUILDER, str(out.resolve()), *copies]
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
