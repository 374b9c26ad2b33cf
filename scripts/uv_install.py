"""Install with uv what pip would install, from the sources pip would use.

``make install`` and ``make isolation`` install the same sets over and over into
fresh venvs; uv does it in seconds where pip takes minutes (the workspace's 25
editable distributions: see the note in Makefile). uv does not read pip's
configuration, so pip's effective index, extra indexes, find-links and
constraint files (its config files and ``PIP_*`` variables) are handed to it.

    python scripts/uv_install.py [--python PYTHON] REQUIREMENT... [uv pip install options]

installs into the venv of ``--python`` (default: the Python running this script).
Pin torch (``torch==2.13.0``): this machine's CPU build of it lies in pip's
find-links as ``2.13.0+cpu``, which outranks the index's CUDA build of the same
version, as it does for pip.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

#: pip setting -> the uv option that means the same
UV_OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url", "find-links": "--find-links", "constraint": "-c"}


@functools.cache
def pip_sources() -> tuple[str, ...]:
    """pip's effective package sources and constraint files, as uv options (each once)."""
    result = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=False)
    options: list[tuple[str, str]] = []
    for line in result.stdout.splitlines():
        key, _, value = line.partition("=")
        flag = UV_OPTIONS.get(key.rsplit(".", 1)[-1])
        for item in value.strip().strip("'\"").split() if flag else ():
            if flag == "-c" and not Path(item).is_file():
                continue
            if (flag, item) not in options:
                options.append((flag, item))
    return tuple(part for option in options for part in option)


@functools.cache
def uv_binary() -> str | None:
    """The uv executable of the dev extra, or None. Cached, and to be asked once before threads use it: finding it
    reads sysconfig, whose first read is not thread-safe (threads racing it got None for EXE: a TypeError)."""
    try:
        from uv import find_uv_bin
    except ImportError:
        return None
    return find_uv_bin()


def uv_install_command(python: Path | str, *, compile_bytecode: bool = True) -> list[str] | None:
    """``uv pip install`` into the venv of ``python`` from pip's sources, or None when uv is not installed.

    ``compile_bytecode``: write the .pyc files at install, as pip does. Where PYTHONDONTWRITEBYTECODE is set
    (this machine), Python never writes them itself, so without it every process compiles what it imports
    again: a fresh clone's suite took 22 min instead of 19. A venv that runs few processes is better off
    without: compiling a torch user's venv took 150 s, more than its tests then saved.
    """
    uv = uv_binary()
    if uv is None:
        return None
    # unsafe-best-match: the best version from any source, as pip picks (uv's default takes every version of a
    # package from the first source that has it, and the extra indexes come first: older releases on this machine)
    return [uv, "pip", "install", "--quiet", "--python", str(python), "--index-strategy", "unsafe-best-match",
            *(["--compile-bytecode"] if compile_bytecode else []), *pip_sources()]


def main(argv: list[str]) -> int:
    python = sys.executable
    if argv[:1] == ["--python"]:
        python, argv = argv[1], argv[2:]
    command = uv_install_command(python)
    if command is None:  # uv is a dev dependency; without it, pip does the same more slowly
        command = [python, "-m", "pip", "install", "--quiet"]
    return subprocess.run([*command, *argv], env=os.environ.copy(), check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
