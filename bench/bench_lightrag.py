"""LightRAG's four modes (heta-plugin-lightrag) beside heta_graph_search and hybrid_search, offline.

The knowledge base is bench_modes.py's recipe (MiniLM + FAISS, Whoosh, the nlp
graph without description embeddings) over the first ``--articles`` English
Wikipedia articles (bench/common.py), i.e. bench_modes' ``--articles`` quick-look
tier, the smallest in bench/; the known-item queries (an article's short
description -> that article, seed 0) are sampled from those articles only.
No language model: the LightRAG modes use their offline keywords (the query's
phrases and the graph's matching type labels), so this measures the retrieval,
not a model's keyword quality. Every query runs in every mode, the modes' order
rotating per query so none always gets the warm cache. A document ranks by its
best result (a graph fact speaks for the documents of its evidence chunks).

Writes bench/results/lightrag.json.

    python bench/bench_lightrag.py                      # 2000 articles, 200 queries: ~6 minutes on 2 cores
    python bench/bench_lightrag.py --articles 500 --queries 100
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_modes  # noqa: E402
from common import (  # noqa: E402
    Timer,
    known_item_queries,
    machine_load,
    mrr_recall,
    percentiles_ms,
    ranked_documents,
    write_result,
)

MODES = ("heta_graph_search", "hybrid_search", "lightrag_local", "lightrag_global", "lightrag_hybrid", "lightrag_mix")
DEPTH = bench_modes.DEPTH


async def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--work", type=Path, help="keep the knowledge base here (default: a temporary folder)")
    args = parser.parse_args()
    from heta_framework.kb import KnowledgeBase

    bench_modes.ARTICLE_LIMIT = args.articles
    corpus = bench_modes.articles()
    queries = known_item_queries(corpus, args.queries)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-lightrag-"))
    folder = work / "kb"
    if (folder / "recipe.toml").exists() or (folder / "run.json").exists():
        kb = KnowledgeBase.load(folder)
        build_seconds = None
    else:
        kb = KnowledgeBase.create(folder, bench_modes.recipe())
        with Timer() as build:
            await kb.build(bench_modes.source_documents(corpus, range(1)))
        build_seconds = round(build.seconds, 1)
    missing = [m for m in MODES if m not in kb.available_queries]
    if missing:
        raise SystemExit(f"modes not available: {missing} (install heta-plugin-lightrag and heta-plugin-fulltext)")

    for mode in MODES:  # warm-up: lazily opened files, the model, the graph's type labels
        await kb.query(queries[0][0], mode=mode, top_k=DEPTH)
    load = machine_load()
    rankings: dict[str, list[list[str]]] = {m: [] for m in MODES}
    seconds: dict[str, list[float]] = {m: [] for m in MODES}
    context_tokens: dict[str, list[int]] = {m: [] for m in MODES if m.startswith("lightrag")}
    for position, (text, _) in enumerate(queries):
        order = MODES[position % len(MODES):] + MODES[: position % len(MODES)]
        for mode in order:
            started = time.perf_counter()
            response = await kb.query(text, mode=mode, top_k=DEPTH)
            seconds[mode].append(time.perf_counter() - started)
            documents = [d for r in response.results for d in bench_modes.result_documents(r)]
            rankings[mode].append(ranked_documents(documents))
            if mode in context_tokens:
                ctx = response.metadata.get("context", {})
                context_tokens[mode].append(ctx.get("entity_tokens", 0) + ctx.get("relation_tokens", 0) + ctx.get("chunk_tokens", 0))
    gold = [answer for _, answer in queries]
    result = {
        "articles": len(corpus),
        "queries": len(queries),
        "depth": DEPTH,
        "build_seconds": build_seconds,
        "graph": bench_modes.graph_size(kb),
        "load_before": load,
        "load_after": machine_load(),
        "modes": {
            mode: {
                **mrr_recall(rankings[mode], gold),
                **percentiles_ms(seconds[mode]),
                **({"mean_context_tokens": round(sum(context_tokens[mode]) / len(context_tokens[mode]))} if mode in context_tokens else {}),
            }
            for mode in MODES
        },
    }
    kb.close()
    path = write_result("lightrag", result)
    for mode, row in result["modes"].items():
        print(f"{mode:20s} MRR@10 {row['mrr@10']:.3f}  R@10 {row['recall@10']:.3f}  p50 {row['p50_ms']:.1f} ms  p95 {row['p95_ms']:.1f} ms")
    print(f"wrote {path}")
    return result


if __name__ == "__main__":
    asyncio.run(main())
