"""What OpenTelemetry tracing costs a query (issue #42): p50 with no SDK against the SDK recording every span.

Heta makes its spans with ``opentelemetry-api`` only. Without an SDK those are the API's no-op spans;
with one, every build, query, mode, store read and model call records a span. This bench queries a
small knowledge base both ways:

``off``  no SDK installed in the process: the API's default, no-op provider (what a user who configured
         nothing runs).
``on``   the SDK's ``TracerProvider`` with a ``SimpleSpanProcessor`` and an ``InMemorySpanExporter``: every
         span recorded and exported synchronously on the query's own path (a ``BatchSpanProcessor``, what
         production uses, moves the export off it, so this is the upper bound).

An OpenTelemetry provider is set once per process, so each round is its own process, and the rounds
alternate (off, on, off, on, ...): both sides see the same moments of a shared machine. Each round opens
the knowledge base, warms it up on a few queries, then times every query in ``vector_search`` (a few
spans) and ``heta_rerank_search`` (a span per composed mode, store read and the embedding call: ~13).

The knowledge base: the first 300 Wikipedia summaries of the bench set (``common.load_articles``) with
the offline recipe (MiniLM + FAISS, Whoosh, the nlp graph); the queries are their known-item
descriptions. Writes bench/results/tracing.json.

    python bench/bench_tracing.py --work /tmp/bm-tracing              # builds DIR/kb when absent
    python bench/bench_tracing.py --work /tmp/bm-tracing --rounds 2 --queries 30   # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

MODES = ("vector_search", "heta_rerank_search")
ARTICLES = 300
WARM_UP = 5


def build(path: Path, articles: int) -> None:
    from common import load_articles
    from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
    from heta_framework.common.models import EmbeddingModel
    from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    recipe = Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")),
        steps=[ParseDocuments(), SplitDocuments(), EmbedChunks(), IndexVectors(), IndexFullText(), HetaGraphProcedure(extractor="nlp")],
    )
    documents = [SourceDocument(text=a["text"], id=a["id"], name=f"{a['id']}.txt") for a in load_articles()[:articles]]
    with KnowledgeBase.create(path, recipe) as kb:
        kb.sync.build(documents)


def queries(count: int, articles: int) -> list[str]:
    from common import known_item_queries, load_articles

    return [text for text, _gold in known_item_queries(load_articles()[:articles], count, seed=0)]


def spans_in_memory() -> object:
    """The SDK, every span recorded and exported synchronously into memory."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter


async def one_round(kb_path: Path, tracing: bool, texts: list[str]) -> dict:
    """In this process: open the knowledge base, warm up, time each query in each mode (modes taking turns)."""
    exporter = spans_in_memory() if tracing else None
    from heta_framework.kb import KnowledgeBase

    seconds: dict[str, list[float]] = {mode: [] for mode in MODES}
    with KnowledgeBase.load(kb_path) as kb:
        for text in texts[:WARM_UP]:
            for mode in MODES:
                await kb.query(text, mode=mode, top_k=10)
        for position, text in enumerate(texts):
            for mode in MODES if position % 2 == 0 else MODES[::-1]:
                started = time.perf_counter()
                await kb.query(text, mode=mode, top_k=10)
                seconds[mode].append(time.perf_counter() - started)
    spans = len(exporter.get_finished_spans()) if exporter is not None else 0  # type: ignore[attr-defined]
    return {"seconds": seconds, "spans": spans, "queries": len(texts) + WARM_UP}


async def interleaved(kb_path: Path, texts: list[str]) -> dict:
    """In one process, off and on taking turns query by query (``common.alternating``: the order flips on every
    query), so both sides see the same moments of the machine. "Off" takes the path of a process with no
    provider: the global provider is put back to unset around its calls (a private attribute of the API, the
    one way to have both in one process; Heta's ``tracing_installed()`` then sees no SDK)."""
    from common import alternating
    from heta_framework.kb import KnowledgeBase
    from opentelemetry import trace

    exporter = spans_in_memory()
    provider = trace.get_tracer_provider()
    results = {}
    with KnowledgeBase.load(kb_path) as kb:
        for mode in MODES:
            async def off(text: str, mode: str = mode) -> None:
                trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
                try:
                    await kb.query(text, mode=mode, top_k=10)
                finally:
                    trace._TRACER_PROVIDER = provider  # type: ignore[attr-defined]

            async def on(text: str, mode: str = mode) -> None:
                await kb.query(text, mode=mode, top_k=10)

            for text in texts[:WARM_UP]:
                await off(text)
                await on(text)
            exporter.clear()  # type: ignore[attr-defined]
            off_seconds, on_seconds = await alternating(off, on, texts)
            spans = len(exporter.get_finished_spans())  # type: ignore[attr-defined]
            results[mode] = {
                "off_p50_ms": p50_ms(off_seconds), "on_p50_ms": p50_ms(on_seconds),
                "difference_p50_ms": round(p50_ms(on_seconds) - p50_ms(off_seconds), 3),
                "ratio_p50": round(p50_ms(on_seconds) / p50_ms(off_seconds), 3),
                "spans_per_query": round(spans / (len(texts) + 1), 1),  # alternating() warms each side once more
            }
    return results


def p50_ms(values: list[float]) -> float:
    return round(statistics.median(values) * 1000, 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="folder for the knowledge base (built when absent)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds in all, alternating off and on (even)")
    parser.add_argument("--queries", type=int, default=100, help="queries timed per mode and round")
    parser.add_argument("--articles", type=int, default=ARTICLES, help="documents in the knowledge base (when it is built)")
    parser.add_argument("--round", choices=("off", "on", "interleaved"), help=argparse.SUPPRESS)  # in its own process
    args = parser.parse_args()
    kb_path = args.work / "kb"
    texts = queries(args.queries, args.articles)
    if args.round == "interleaved":
        print(json.dumps(asyncio.run(interleaved(kb_path, texts))))
        return
    if args.round:
        print(json.dumps(asyncio.run(one_round(kb_path, args.round == "on", texts))))
        return

    from common import machine_load, write_result

    if not (kb_path / "recipe.toml").exists():
        args.work.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        build(kb_path, args.articles)
        print(f"built {kb_path} in {time.perf_counter() - started:.0f}s", flush=True)
    load_before = machine_load()
    rounds = []
    for index in range(args.rounds):
        side = "off" if index % 2 == 0 else "on"
        done = subprocess.run(
            [sys.executable, __file__, "--work", str(args.work), "--queries", str(args.queries), "--articles", str(args.articles),
             "--round", side],
            capture_output=True, text=True, check=True,
        )
        result = json.loads(done.stdout.strip().splitlines()[-1])
        rounds.append({"side": side, **{f"{mode}_p50_ms": p50_ms(result["seconds"][mode]) for mode in MODES}, "spans": result["spans"],
                       "seconds": result["seconds"]})
        print(f"round {index + 1} {side}: " + ", ".join(f"{m} p50 {rounds[-1][f'{m}_p50_ms']} ms" for m in MODES)
              + f", {result['spans']} spans", flush=True)

    summary = {}
    for mode in MODES:
        off = [s for r in rounds if r["side"] == "off" for s in r["seconds"][mode]]
        on = [s for r in rounds if r["side"] == "on" for s in r["seconds"][mode]]
        summary[mode] = {
            "off_p50_ms": p50_ms(off), "on_p50_ms": p50_ms(on),
            "difference_p50_ms": round(p50_ms(on) - p50_ms(off), 3),
            "ratio_p50": round(p50_ms(on) / p50_ms(off), 3),
            "off_round_p50s_ms": [r[f"{mode}_p50_ms"] for r in rounds if r["side"] == "off"],
            "on_round_p50s_ms": [r[f"{mode}_p50_ms"] for r in rounds if r["side"] == "on"],
            # each on round against the off round just before it: the machine's drift between rounds cancels
            "paired_difference_p50_ms": round(statistics.median(
                rounds[i][f"{mode}_p50_ms"] - rounds[i - 1][f"{mode}_p50_ms"] for i in range(1, len(rounds), 2)
            ), 3) if len(rounds) > 1 else None,
        }
    done = subprocess.run(
        [sys.executable, __file__, "--work", str(args.work), "--queries", str(args.queries), "--articles", str(args.articles),
         "--round", "interleaved"], capture_output=True, text=True, check=True,
    )
    in_process = json.loads(done.stdout.strip().splitlines()[-1])
    on_rounds = [r for r in rounds if r["side"] == "on"]
    spans_per_query = round(on_rounds[0]["spans"] / ((args.queries + WARM_UP) * len(MODES)), 1) if on_rounds else None
    path = write_result("tracing", {
        "knowledge_base": f"{args.articles} Wikipedia summaries, offline recipe (MiniLM, FAISS, Whoosh, nlp graph)",
        "queries_per_mode_and_round": args.queries, "rounds": [r["side"] for r in rounds],
        "on": "SDK TracerProvider + SimpleSpanProcessor + InMemorySpanExporter", "off": "no SDK (the API's no-op provider)",
        "spans_per_query_both_modes": spans_per_query, "modes": summary,
        "interleaved": {"how": "one process, off and on alternating query by query", "modes": in_process},
        "machine_before": load_before, "machine_after": machine_load(),
    })
    for mode, numbers in summary.items():
        print(f"{mode}: off p50 {numbers['off_p50_ms']} ms, on p50 {numbers['on_p50_ms']} ms "
              f"({numbers['difference_p50_ms']:+} ms, x{numbers['ratio_p50']}; paired rounds {numbers['paired_difference_p50_ms']:+} ms)")
    for mode, numbers in in_process.items():
        print(f"{mode} interleaved: off p50 {numbers['off_p50_ms']} ms, on p50 {numbers['on_p50_ms']} ms "
              f"({numbers['difference_p50_ms']:+} ms, x{numbers['ratio_p50']}), {numbers['spans_per_query']} spans a query")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
