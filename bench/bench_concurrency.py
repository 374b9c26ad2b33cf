"""Throughput of 8 concurrent queries against one after another, per mode, on an existing knowledge base.

The two take turns in rounds in one process (the machine is shared), and every
concurrent answer must rank the same chunks as the sequential one. ``--save``
writes each query's ranking to a file and ``--compare`` checks a later run
against it, so a change to a store can be shown to keep results identical.

    python bench/bench_concurrency.py --kb /path/to/kb-10k --modes sql_text_search --save before.json
    python bench/bench_concurrency.py --kb /path/to/kb-10k --modes sql_text_search --compare before.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import known_item_queries, load_articles, machine_load, warm_for_concurrency, write_result

DEPTH = 30
WIDTH = 8


def ranking(response) -> list[str]:
    return [result.id for result in response.results]


async def throughput(kb, mode: str, texts: Sequence[str], rounds: int) -> tuple[dict, dict[str, list[str]]]:
    """Queries per second one by one and WIDTH at a time, alternating per round; the rankings of both."""
    sequential_rankings: dict[str, list[str]] = {}
    concurrent_rankings: dict[str, list[str]] = {}

    async def one_by_one(part):
        for text in part:
            sequential_rankings[text] = ranking(await kb.query(text, mode=mode, top_k=DEPTH))

    async def together(part):
        gate = asyncio.Semaphore(WIDTH)

        async def one(text):
            async with gate:
                concurrent_rankings[text] = ranking(await kb.query(text, mode=mode, top_k=DEPTH))

        await asyncio.gather(*(one(text) for text in part))

    await warm_for_concurrency(kb, mode, texts, WIDTH, DEPTH)  # the warm-up too
    seconds = {"sequential": 0.0, "concurrent": 0.0}
    size = max(1, len(texts) // rounds)
    for round_number, start in enumerate(range(0, size * rounds, size)):
        part = texts[start : start + size]
        order = [("sequential", one_by_one), ("concurrent", together)]
        for label, run in order if round_number % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            await run(part)
            seconds[label] += time.perf_counter() - started
    if sequential_rankings != concurrent_rankings:
        raise AssertionError(f"{mode}: concurrent queries ranked differently from sequential ones")
    done = size * rounds
    sequential, concurrent = done / seconds["sequential"], done / seconds["concurrent"]
    row = {"queries": done, "sequential_qps": round(sequential, 1), f"concurrent_{WIDTH}_qps": round(concurrent, 1),
           "speedup": round(concurrent / sequential, 2)}
    return row, sequential_rankings


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True, help="a knowledge base built by bench_modes.py (--work keeps it)")
    parser.add_argument("--modes", nargs="+", default=["sql_text_search", "full_text_search", "vector_search", "heta_graph_search"])
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--save", type=Path, help="write every query's ranking here")
    parser.add_argument("--compare", type=Path, help="fail unless every ranking equals the one saved here")
    args = parser.parse_args()

    from heta_framework.kb import KnowledgeBase

    texts = [text for text, _ in known_item_queries(load_articles(), args.queries)]
    kb = KnowledgeBase.load(args.kb)
    out: dict = {"machine_before": machine_load(), "modes": {}}
    rankings: dict[str, dict[str, list[str]]] = {}
    for mode in args.modes:
        out["modes"][mode], rankings[mode] = await throughput(kb, mode, texts, args.rounds)
        print(mode, out["modes"][mode], flush=True)
    out["machine_after"] = machine_load()
    if args.save:
        args.save.write_text(json.dumps(rankings))
    if args.compare:
        saved = json.loads(args.compare.read_text())
        for mode, by_text in rankings.items():
            if mode in saved and saved[mode] != by_text:
                raise AssertionError(f"{mode}: rankings differ from {args.compare}")
        out["same_rankings_as"] = str(args.compare)
    print("written", write_result("concurrency", out))


if __name__ == "__main__":
    asyncio.run(main())
