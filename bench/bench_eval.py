"""Quality of every mode through `heta eval`: the Wikipedia known-item set on bench_modes' 10k knowledge base.

`make bench` runs bench_modes.py with a kept working folder, then this script runs

    heta --kb WORK/kb-10k eval wikipedia --queries 400 --out WORK/eval --no-chart --fresh --json

(the same 400 queries bench_modes samples: seed 0 over every article), so the quality
table in docs/benchmarks.md is what a user's `heta eval` prints: nDCG@10, MAP@10,
MRR@10, Recall@10, Precision@10 and p50/p95 per mode. Writes bench/results/eval.json.

    python bench/bench_eval.py --work FOLDER [--queries 400]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import write_result

DEFAULT_QUERIES = 400  # as bench_modes.DEFAULT_QUERIES: the same queries, so the two quality figures can be compared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="bench_modes.py's working folder (holds kb-10k)")
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES)
    args = parser.parse_args()
    kb = args.work / "kb-10k"
    command = ["heta", "--kb", str(kb), "eval", "wikipedia", "--queries", str(args.queries), "--out", str(args.work / "eval"),
               "--no-chart", "--fresh", "--json"]  # a benchmark measures afresh
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "heta_framework.cli.main", *command[1:]], capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"heta eval failed ({done.returncode}): {done.stderr[-2000:]}")
    report = json.loads(done.stdout)
    report["command"] = " ".join(command)
    report["seconds"] = round(time.perf_counter() - started, 1)
    print(f"wrote {write_result('eval', report)} in {report['seconds']} s")


if __name__ == "__main__":
    main()
