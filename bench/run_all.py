"""`make bench`: run the benchmark suite, then write docs/benchmarks.md from bench/results/*.json.

Each script measures Heta beside the raw library doing the same work and writes
its own JSON; this file only orchestrates (bench/report.py renders). A script
that fails is reported in the page rather than hidden.

    python bench/run_all.py            # the suite: under 20 minutes on 2 cores
    python bench/run_all.py --all      # also the component benchmarks (1M vectors, both full-text backends, LLM graph calls)
    python bench/run_all.py --render   # only rebuild docs/benchmarks.md from existing results
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from report import render  # noqa: E402

PAGE = BENCH.parent / "docs" / "benchmarks.md"
RUN_LOG = BENCH / "results" / "run_log.json"

#: script -> arguments. The suite: quality, throughput, latency and memory of every mode at 10k and 100k chunks;
#: then every mode's quality through `heta eval` on the 10k knowledge base bench_modes kept in the working folder
#: ({work} is replaced by a temporary folder, removed at the end)
SUITE = {
    "bench_modes.py": ["--work", "{work}"],
    "bench_eval.py": ["--work", "{work}"],
}
#: one plugin each, longer or about another issue: the vector store at 1M vectors, Whoosh against tantivy,
#: the graph's LLM-call economics against a scripted server (its nlp extractor is measured by bench_modes)
COMPONENTS = {
    "bench_vector.py": [],
    "bench_fulltext.py": [],
    "bench_graph.py": ["--skip-offline"],
    "bench_big_document.py": [],
    # heta-plugin-ocr: seconds per generated scanned page and character accuracy
    "bench_ocr.py": [],
    # English, French, Spanish (1,000 articles each) and the Chinese set: every analyzer, calibrated fusion, bm25s
    "bench_multilingual.py": [],
}


def run_scripts(scripts: dict[str, list[str]], work: Path) -> dict[str, dict]:
    log: dict[str, dict] = {}
    for script, args in scripts.items():
        print(f"== {script}", flush=True)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, str(BENCH / script), *(a.format(work=work) for a in args)], check=False)
        log[script] = {"status": "ok" if result.returncode == 0 else f"failed ({result.returncode})", "seconds": round(time.perf_counter() - started, 1)}
    return log


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--render", action="store_true", help="only render docs/benchmarks.md")
    parser.add_argument("--all", action="store_true", help="also run the component benchmarks")
    args = parser.parse_args()
    if args.render:
        log = json.loads(RUN_LOG.read_text()) if RUN_LOG.exists() else {}
    else:
        work = Path(tempfile.mkdtemp(prefix="heta-bench-"))
        try:
            log = run_scripts({**SUITE, **(COMPONENTS if args.all else {})}, work)
        finally:
            # ~200k small files: removing them takes half a minute that is no part of any measurement
            subprocess.Popen(["rm", "-rf", str(work)], start_new_session=True)
        RUN_LOG.write_text(json.dumps(log, indent=2) + "\n")  # so --render can show how the results were made
    PAGE.write_text(render(log), encoding="utf-8")
    print(f"wrote {PAGE}")
    if any(entry["status"] != "ok" for entry in log.values()):
        sys.exit(1)


if __name__ == "__main__":
    main()
