"""heta_graph_search's per-query cost without the model, on two graphs of different sizes, in turns in one process.

Issue 14: the neighbour filter was a ``json_extract`` scan over every entity row
and evidence chunks were re-tokenised per fact, so a query cost more as the graph
grew. Here the same queries run against a small and a large knowledge base,
alternately, with the query vectors precomputed (the model's cost does not
depend on the graph), so the difference is what the graph's size adds.

    python bench/bench_graph_scaling.py SMALL_KB LARGE_KB [--queries 200]

Both folders are knowledge bases bench_modes.py built (``--work``; e.g. one with
``--articles 3000`` and the 10k tier). Prints and returns JSON; writes nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_modes import DEPTH, CountedEmbeddings, articles, graph_size  # noqa: E402
from common import alternating, known_item_queries, machine_load, percentiles_ms  # noqa: E402


async def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("small", type=Path)
    parser.add_argument("large", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    from heta_framework.kb import KnowledgeBase

    texts = [q for q, _ in known_item_queries(articles(), args.queries)]
    bases = [KnowledgeBase.load(args.small), KnowledgeBase.load(args.large)]
    for kb in bases:
        counted = CountedEmbeddings(kb.get_component("models.embedding"))
        counted.precomputed = dict(zip(texts, await counted.real_embed(texts)))

    def search(kb):
        return lambda text: kb.query(text, mode="heta_graph_search", top_k=DEPTH)

    load = machine_load()
    small_s, large_s = await alternating(search(bases[0]), search(bases[1]), texts)
    result = {"queries": len(texts), "load_before": load, "load_after": machine_load()}
    for label, kb, seconds in (("small", bases[0], small_s), ("large", bases[1], large_s)):
        result[label] = {"graph": graph_size(kb), **percentiles_ms(seconds)}
        kb.close()
    result["entities_ratio"] = round(result["large"]["graph"]["entities"] / result["small"]["graph"]["entities"], 2)
    result["p50_ratio"] = round(result["large"]["p50_ms"] / result["small"]["p50_ms"], 2)
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    asyncio.run(main())
