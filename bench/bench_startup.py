"""Start-up cost: importing ``heta_framework.kb`` (what every program and plugin does first) and ``heta --help``.

Each measure runs in a fresh interpreter, ``--runs`` times, alternating the trees when two are compared, and
reports the median. ``--src PATH`` measures another checkout's ``core/src`` (put first on ``sys.path``, so it
wins over the installed editable core): ``python bench/bench_startup.py --src /tmp/old/core/src`` compares a
commit before a change with the work tree.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IMPORT = "import time; t = time.perf_counter(); import heta_framework.kb; print(time.perf_counter() - t)"
HELP = "import sys; sys.argv = ['heta', '--help']; from heta_framework.cli.main import main; main()"


def environment(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src)}


def import_seconds(src: Path) -> float:
    out = subprocess.run([sys.executable, "-c", IMPORT], env=environment(src), capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def help_seconds(src: Path) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", HELP], env=environment(src), capture_output=True, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, action="append", default=[], help="another core/src to measure beside this tree's")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    trees = {"work tree": ROOT / "core" / "src", **{str(p): p for p in args.src}}
    for src in trees.values():  # warm the file cache and the bytecode of each tree once
        import_seconds(src)
    samples: dict[str, dict[str, list[float]]] = {name: {"import_ms": [], "help_ms": []} for name in trees}
    for _ in range(args.runs):
        for name, src in trees.items():
            samples[name]["import_ms"].append(import_seconds(src) * 1000)
            samples[name]["help_ms"].append(help_seconds(src) * 1000)
    result = {name: {k: round(statistics.median(v), 1) for k, v in measures.items()} for name, measures in samples.items()}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
