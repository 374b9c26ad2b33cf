"""The ray executor on work that waits on a remote model: LLM entity extraction, 1,000 chunks.

The model is the scripted OpenAI-compatible server (``CapitalisedExtractor``) answering each call after
``--delay`` seconds (0.5), in a process of its own as a provider would be; the real openai client asks it.
Each run builds an empty knowledge base from the same Wikipedia summaries (one chunk each: parse, split,
persist, ``extract_entities``) and reports the extraction step's calls per second. A first, small build of
64 other summaries starts the executor's workers (as the steps before extraction would in a real build),
and its time is reported too: what starting the workers costs once per build.

- ``local`` at step concurrency 8, 16, 32, 64 (calls in flight in this process);
- ``ray`` with 1, 2, 4, 8 workers (a quarter CPU each: they wait, they do not compute), each worker with
  8 calls in flight, so N workers have 8·N in flight.

Checks that every run found the same entities.

    python bench/bench_executor_llm.py --chunks 1000 --delay 0.5
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # the local cluster on 127.0.0.1 only

sys.path.insert(0, str(Path(__file__).parent))
from common import load_articles, write_result  # noqa: E402
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments  # noqa: E402
from heta_framework.common.models import LanguageModel  # noqa: E402
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument  # noqa: E402
from heta_framework.plugins.registry import PluginRegistry  # noqa: E402
from heta_framework.runtime.recipe import ExecutorConfig  # noqa: E402
from heta_plugin_graph.steps import ExtractEntities  # noqa: E402

# the scripted model in a process of its own: prints its base URL, serves until stdin closes
SERVER = """
import sys
from heta_framework.testing.http import ScriptedServer
from heta_plugin_graph.testing import CapitalisedExtractor
with ScriptedServer() as server:
    server.respond("chat/completions", CapitalisedExtractor(delay=float(sys.argv[1])))
    print(server.base_url, flush=True)
    sys.stdin.read()
"""
PER_WORKER = 8


def run(folder: Path, base_url: str, warm_up: list[SourceDocument], documents: list[SourceDocument], concurrency: int,
        executor: ExecutorConfig | None) -> dict:
    """Build ``warm_up`` (the executor starts its workers), then ``documents`` in the same knowledge base: the
    second build's extraction is the steady rate of a long build; the first one's time says what starting costs."""
    models = KnowledgeModels(language=LanguageModel(
        model_name="openai/bench-model", base_url=base_url, api_key="sk-bench", options={"concurrency": 256, "max_attempts": 2},
    ))
    steps = [ParseDocuments(), SplitDocuments(chunk_size=4000, chunk_overlap=0), PersistChunks(), ExtractEntities(concurrency=concurrency)]
    registry = PluginRegistry.from_entry_points()
    with KnowledgeBase.create(folder, Recipe(models=models, steps=steps, executor=executor), registry=registry) as kb:
        started = kb.sync.build(warm_up)
        report = kb.sync.build(documents)
        workers = dict(kb.executor.counts().get("workers", {}))
    for done in (started, report):
        assert not done.issues, done.issues[:3]
    first = next(s for s in started.steps if s.name == "extract_entities")
    step = next(s for s in report.steps if s.name == "extract_entities")
    return {"seconds": round(step.seconds, 2), "calls": step.stats["llm_calls"], "entities": step.stats["entities_found"],
            "calls_per_second": round(step.stats["llm_calls"] / step.seconds, 1),
            "first_build_seconds": round(first.seconds, 2), "first_build_calls": first.stats["llm_calls"], "workers": workers}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--delay", type=float, default=0.5)
    args = parser.parse_args()
    articles = [SourceDocument(text=a["text"][:3500], id=a["id"]) for a in load_articles()]
    documents, warm_up = articles[: args.chunks], articles[args.chunks : args.chunks + 8 * PER_WORKER]
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(args.delay)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    base_url = server.stdout.readline().strip()
    import ray

    ray.init(num_cpus=os.cpu_count(), _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False, configure_logging=False)
    runs: dict[str, dict] = {}
    scratch = Path(tempfile.mkdtemp(prefix="heta-bench-executor-llm-"))
    try:
        for concurrency in (8, 16, 32, 64):
            runs[f"local, concurrency {concurrency}"] = run(scratch / f"local-{concurrency}", base_url, warm_up, documents, concurrency, None)
            print(f"local, concurrency {concurrency}: {json.dumps(runs[f'local, concurrency {concurrency}'])}", flush=True)
        for workers in (1, 2, 4, 8):
            executor = ExecutorConfig("ray", {"num_workers": workers, "num_cpus": 0.25})
            runs[f"ray, {workers} workers"] = run(scratch / f"ray-{workers}", base_url, warm_up, documents, PER_WORKER, executor)
            print(f"ray, {workers} workers: {json.dumps(runs[f'ray, {workers} workers'])}", flush=True)
    finally:
        ray.shutdown()
        server.stdin.close()
        server.wait(timeout=30)
    assert len({r["entities"] for r in runs.values()}) == 1, "the runs found different entities"
    one = runs["ray, 1 workers"]["calls_per_second"]
    best_local = max(r["calls_per_second"] for name, r in runs.items() if name.startswith("local"))
    result = {
        "measured_on": time.strftime("%Y-%m-%d"), "chunks": len(documents), "model_delay_s": args.delay,
        "calls_per_worker_in_flight": PER_WORKER, "cores": os.cpu_count(), "runs": runs,
        "ray_8_workers_speedup_over_1": round(runs["ray, 8 workers"]["calls_per_second"] / one, 2),
        "ray_8_workers_over_best_local": round(runs["ray, 8 workers"]["calls_per_second"] / best_local, 2),
    }
    print(json.dumps(result, indent=2))
    write_result("executor_llm", result)


if __name__ == "__main__":
    main()
