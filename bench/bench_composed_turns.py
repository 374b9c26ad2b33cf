"""Composed modes against their slowest base mode, taking turns query by query in one process.

Issue 14 asks that ``hybrid_search`` and ``heta_rerank_search`` answer within 2 ms
of their slowest base mode (``heta_graph_search`` for hybrid, ``hybrid_search``
for rerank, whose other leg is ``full_text_search``). bench_modes.py times each
mode over all its queries before the next, so the machine's drift between modes
lands in the difference; here every query runs through every mode, the order
rotating, so all see the same moments. Composed modes run with ``trace=True`` to
report their own (fusion) cost beside the difference.

    python bench/bench_composed_turns.py --kb /path/to/kb-10k [--queries 300]

The knowledge base is one bench_modes.py built (``--work``). Writes bench/results/composed_turns.json.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_modes import DEPTH, own_cost_ms  # noqa: E402
from common import known_item_queries, load_articles, machine_load, write_result  # noqa: E402

#: composed mode -> its slowest base mode (the one its p50 is held against)
AGAINST = {"hybrid_search": "heta_graph_search", "heta_rerank_search": "hybrid_search"}
MODES = ["heta_graph_search", "hybrid_search", "full_text_search", "heta_rerank_search"]


async def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()

    from heta_framework.kb import KnowledgeBase

    texts = [text for text, _ in known_item_queries(load_articles(), args.queries)]
    kb = KnowledgeBase.load(args.kb)
    for mode in MODES:  # warm-up, and the composed modes' one-time fusion calibration
        await kb.query(texts[0], mode=mode, top_k=DEPTH)
    load = machine_load()
    spent: dict[str, list[float]] = {mode: [] for mode in MODES}
    own: dict[str, list[float]] = {mode: [] for mode in AGAINST}
    for number, text in enumerate(texts):
        for mode in MODES[number % len(MODES):] + MODES[: number % len(MODES)]:
            started = time.perf_counter()
            response = await kb.query(text, mode=mode, top_k=DEPTH, trace=mode in AGAINST)
            spent[mode].append((time.perf_counter() - started) * 1000)
            if mode in AGAINST and response.trace is not None:
                own[mode].append(own_cost_ms(response.trace))
    kb.close()
    p50 = {mode: round(statistics.median(values), 2) for mode, values in spent.items()}
    result = {
        "queries": len(texts),
        "top_k": DEPTH,
        "load_before": load,
        "load_after": machine_load(),
        "p50_ms": p50,
        "composed": {
            mode: {
                "slowest_base": base,
                "p50_minus_slowest_base_ms": round(p50[mode] - p50[base], 2),
                "own_cost_p50_ms": round(statistics.median(own[mode]), 2) if own[mode] else None,
            }
            for mode, base in AGAINST.items()
        },
    }
    for mode, row in result["composed"].items():
        print(f"{mode}: p50 {p50[mode]} ms, {row['p50_minus_slowest_base_ms']:+} ms against {row['slowest_base']}, "
              f"own cost {row['own_cost_p50_ms']} ms", flush=True)
    print("written", write_result("composed_turns", result))
    return result


if __name__ == "__main__":
    asyncio.run(main())
