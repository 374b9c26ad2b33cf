"""`make bench`: run the benchmark suite, then write docs/benchmarks.md from bench/results/*.json.

Each script measures Heta beside the raw library doing the same work and writes
its own JSON; this file only orchestrates (bench/report.py renders). A script
that fails is reported in the page rather than hidden.

    python bench/run_all.py            # the suite, the 10k tier: under 20 minutes on 2 cores
    python bench/run_all.py --all      # also the larger runs: the 100k tier, 1M vectors, both full-text backends,
                                       # LLM graph calls, four languages
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

#: (label, script, arguments). The suite: quality, throughput, latency and memory of every mode on the 10k
#: knowledge base; then every mode's quality through `heta eval` on it ({work} is replaced by a temporary folder,
#: removed at the end). bench_modes.py records each stage apart, so the 100k tier of an earlier --all run keeps its
#: numbers (the page says when each stage was measured)
SUITE = (
    ("bench_modes.py (10k)", "bench_modes.py", ["--work", "{work}", "--only", "build-10k", "raw-10k", "query-10k"]),
    ("bench_eval.py", "bench_eval.py", ["--work", "{work}"]),
)
#: the larger runs, with --all: the 100k tier (its embedding cache is seeded from the suite's 10k knowledge base),
#: then one plugin each, longer or about another issue: the vector store at 1M vectors, Whoosh against tantivy,
#: the graph's LLM-call economics against a scripted server (its nlp extractor is measured by bench_modes)
LARGER = (
    # ~5.5 minutes: parsing, splitting and indexing 100k chunks, and the raw libraries doing the same
    ("bench_modes.py (100k)", "bench_modes.py", ["--work", "{work}", "--only", "build-100k", "raw-100k", "query-100k"]),
    # 15-25 minutes on 2 cores: 400 queries in five modes, filtered and not, under an access scope hiding 90% then 10%
    # of a copy of the suite's 10k knowledge base (most of it the model and the slow filtered paths)
    ("bench_access.py", "bench_access.py", ["--work", "{work}"]),
    ("bench_vector.py", "bench_vector.py", []),
    ("bench_fulltext.py", "bench_fulltext.py", []),
    ("bench_graph.py", "bench_graph.py", ["--skip-offline"]),
    ("bench_big_document.py", "bench_big_document.py", []),
    # heta-plugin-ocr: seconds per generated scanned page and character accuracy
    ("bench_ocr.py", "bench_ocr.py", []),
    # English, French, Spanish (1,000 articles each) and the Chinese set: every analyzer, calibrated fusion, bm25s
    ("bench_multilingual.py", "bench_multilingual.py", []),
    # HiRAG and LeanRAG beside hybrid, rerank, GraphRAG and LightRAG on 1,000 articles (offline), then their LLM calls
    # against a scripted model on 100 articles: ~25 minutes on 2 cores (most of it embedding entity descriptions)
    ("bench_hierarchical.py", "bench_hierarchical.py", ["--articles", "1000", "--llm-articles", "100"]),
    # the keyword modes under every analyzer and the default (auto), per language and on a mixed knowledge base
    ("bench_multilingual.py --keywords-only", "bench_multilingual.py", ["--keywords-only"]),
    # the starter recipe's keyword path on 2,000 English articles: tantivy, Whoosh, SQL FTS5 and bm25s, taking turns
    # (~3 minutes); then full text on both stores in French, Spanish and Chinese
    ("bench_keyword_path.py", "bench_keyword_path.py", []),
    # heta serve with streamed answers and chat completions among the five modes, 8 clients for 45 s: errors and latency
    ("bench_server_streaming.py", "bench_server_streaming.py", []),
    # agent_search and heta_multihop_search on a MultiHop-RAG-format sample with a scripted model; wiki pages/s
    ("bench_agent.py", "bench_agent.py", []),
)


def run_scripts(scripts: tuple[tuple[str, str, list[str]], ...], work: Path, suite: bool) -> dict[str, dict]:
    log: dict[str, dict] = {}
    for label, script, args in scripts:
        print(f"== {label}", flush=True)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, str(BENCH / script), *(a.format(work=work) for a in args)], check=False)
        log[label] = {"status": "ok" if result.returncode == 0 else f"failed ({result.returncode})",
                      "seconds": round(time.perf_counter() - started, 1), "suite": suite}
    return log


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--render", action="store_true", help="only render docs/benchmarks.md")
    parser.add_argument("--all", action="store_true", help="also run the larger runs (the 100k tier, the component benchmarks)")
    args = parser.parse_args()
    if args.render:
        log = json.loads(RUN_LOG.read_text()) if RUN_LOG.exists() else {}
    else:
        work = Path(tempfile.mkdtemp(prefix="heta-bench-"))
        try:
            log = run_scripts(SUITE, work, suite=True)
            if args.all:
                log.update(run_scripts(LARGER, work, suite=False))
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
