"""The ray executor against the local one on CPU work: ``embed_chunks`` over the same chunks.

Builds one knowledge base per executor from the same synthetic articles (parse, split, persist, embed with
the offline MiniLM model), each from an empty embedding cache, and reports the embed step's seconds:
``local`` (one process, torch on every core), ``ray`` with 1 worker holding every core (the executor's
overhead) and with 2 single-threaded workers (one per core of this machine). The Ray cluster starts once,
before the rounds, as a long-lived cluster would be; each build still starts its workers and loads the
model in them. Rounds alternate the executors, and each reports the median. Checks that every build
embedded the same texts with vectors within 1e-6.

    python bench/bench_executor.py --chunks 2000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # the local cluster on 127.0.0.1 only

import numpy as np  # noqa: E402
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument  # noqa: E402
from heta_framework.kb.documents import content_hash, iter_chunks  # noqa: E402
from heta_framework.plugins.registry import PluginRegistry  # noqa: E402
from heta_plugin_vector.cache import CACHE_NAME, EmbeddingCache  # noqa: E402

MODEL = "local/all-MiniLM-L6-v2"
EXECUTORS = {
    "local": "",
    "ray, 1 worker": '[executor]\ntype = "ray"\nnum_workers = 1\nnum_cpus = 2',
    "ray, 2 workers": '[executor]\ntype = "ray"\nnum_workers = 2',
}
RECIPE = """
{executor}
[models.embedding]
model_name = "{model}"

[[steps]]
step = "parse_documents"
[[steps]]
step = "split_documents"
chunk_size = 400
chunk_overlap = 0
[[steps]]
step = "persist_chunks"
[[steps]]
step = "embed_chunks"
batch_size = 64
"""
WORDS = (
    "river mountain city harbour engine protein galaxy theorem market language festival glacier orbit enzyme "
    "railway painting treaty volcano algorithm orchestra parliament desert reef satellite manuscript"
).split()


def articles(chunks: int, seed: int = 7) -> list[SourceDocument]:
    """About ``chunks`` chunks of up to 400 tokens: 2 per article of 50 sentences of random topic words."""
    rng = random.Random(seed)
    documents = []
    for number in range(max(1, chunks // 2)):
        sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "." for _ in range(50)]
        documents.append(SourceDocument(text=" ".join(sentences), id=f"article-{number}"))
    return documents


def build(folder: Path, executor: str, documents: list[SourceDocument]) -> tuple[float, dict[str, np.ndarray], dict]:
    registry = PluginRegistry.from_entry_points()
    kb = KnowledgeBase.create(folder, Recipe.from_toml(RECIPE.format(executor=executor, model=MODEL), registry), registry=registry)
    try:
        report = kb.sync.build(documents)
        embed = next(s for s in report.steps if s.name == "embed_chunks")
        chunks = list(iter_chunks(kb.objects, list(kb.objects.keys("chunks/"))))
        with EmbeddingCache(kb.state.cache(CACHE_NAME)) as cache:
            vectors = cache.get_many(MODEL, sorted({content_hash(c.text) for c in chunks}))
        return embed.seconds, vectors, dict(report.executor)
    finally:
        kb.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "executor.json")
    args = parser.parse_args()
    documents = articles(args.chunks)
    import ray

    ray.init(num_cpus=os.cpu_count(), _node_ip_address="127.0.0.1", include_dashboard=False, log_to_driver=False, configure_logging=False)
    seconds: dict[str, list[float]] = {name: [] for name in EXECUTORS}
    reference: dict[str, np.ndarray] | None = None
    worst = 0.0
    scratch = Path(tempfile.mkdtemp(prefix="heta-bench-executor-"))
    try:
        for round_number in range(args.rounds):
            order = list(EXECUTORS) if round_number % 2 == 0 else list(reversed(EXECUTORS))
            for name in order:
                folder = scratch / f"{round_number}-{name.replace(' ', '_').replace(',', '')}"
                took, vectors, counts = build(folder, EXECUTORS[name], documents)
                seconds[name].append(took)
                if reference is None:
                    reference = vectors
                assert vectors.keys() == reference.keys(), f"{name} embedded other texts"
                worst = max(worst, max(float(np.abs(vectors[h] - reference[h]).max()) for h in reference))
                print(f"round {round_number + 1} {name}: embed_chunks {took:.1f} s {json.dumps(counts.get('workers', {}))}", flush=True)
                shutil.rmtree(folder, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        ray.shutdown()
    texts = len(reference or {})
    local = statistics.median(seconds["local"])
    result = {
        "measured_on": time.strftime("%Y-%m-%d"), "chunks_embedded": texts, "rounds": args.rounds, "max_vector_difference": worst,
        "embed_seconds_median": {name: round(statistics.median(v), 2) for name, v in seconds.items()},
        "texts_per_second": {name: round(texts / statistics.median(v), 1) for name, v in seconds.items()},
        "ray_1_worker_overhead": round(statistics.median(seconds["ray, 1 worker"]) / local - 1, 3),
        "ray_2_workers_speedup": round(local / statistics.median(seconds["ray, 2 workers"]), 3),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
