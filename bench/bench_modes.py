"""Every query mode on one knowledge base, at 10k and 100k chunks, beside the raw libraries.

The 10k knowledge base is the one a user of the offline defaults gets:
ParseDocuments, SplitDocuments, PersistChunks, EmbedChunks + IndexVectors (local
MiniLM, FAISS), IndexFullText (Whoosh) and ``HetaGraphProcedure(extractor="nlp",
embed_descriptions=False)``. Six modes are available: ``sql_text_search``,
``full_text_search``, ``vector_search``, ``heta_graph_search``, ``hybrid_search``
and ``heta_rerank_search`` (the LLM modes need a language model and are skipped).

Stages, each in its own process so its peak memory is its own:

``build-10k``   create the knowledge base from the ~10k Wikipedia articles (bench/common.py):
                seconds and chunks/s per step, peak RSS of the build.
``raw-10k``     the raw libraries (bench/raw.py) doing the same work on the same chunk texts:
                sqlite3 FTS5 inserts, SentenceTransformer.encode + IndexFlatIP.add, a Whoosh
                writer, bm25s; their query latency; the plain-library quality references.
``query-10k``   KnowledgeBase.load, then 400 known-item queries in every available mode:
                MRR@10, Recall@10, p50/p95, the composed modes' own cost from traces, peak RSS.
``build-100k``  a second knowledge base of ~100k chunks: the articles ten times under new ids,
                with the same recipe minus the graph (building an nlp graph over 100k chunks
                takes ~7 minutes on 2 cores, a third of the budget). Parsing, splitting,
                persisting and indexing are real work; its embedding cache is seeded from the
                10k tier, so ``embed_chunks`` reads vectors (model throughput is the 10k figure).
``raw-100k``    the raw libraries on the 100k chunk texts (FAISS gets the 10k stage's vectors).
``query-100k``  latency per mode at 100k (quality is not scored: every article is there 10 times).

Writes bench/results/modes.json.

    python bench/bench_modes.py --work /tmp/bm              # every stage, ~25 minutes on 2 cores; keep the KBs
    python bench/bench_modes.py --queries 200 --skip-100k   # a quick look
    python bench/bench_modes.py --work /tmp/bm --only query-10k query-100k   # the query path again, same KBs
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import raw  # noqa: E402
from bench_concurrency import throughput  # noqa: E402
from common import (  # noqa: E402
    RESULTS,
    Timer,
    alternating,
    comparison,
    known_item_queries,
    load_articles,
    machine_load,
    mrr_recall,
    peak_memory_mb,
    percentiles_ms,
    ranked_documents,
    timed,
    write_result,
)

EMBEDDING = "local/all-MiniLM-L6-v2"
COPIES_AT_100K = 10
RAW_ENCODE_SAMPLE = 1000  # chunks the raw sentence-transformers side encodes itself (see raw_vectors)
#: 400 known-item queries keep `make bench` well under 20 minutes on 2 cores (the six modes cost ~0.3 s per
#: query); the standard error of an MRR@10 is then about 0.02, less for the difference between two modes on the
#: same queries
DEFAULT_QUERIES = 400
DEPTH = 30  # results asked of every mode; documents rank by their best result
COMPOSED = ("hybrid_search", "heta_rerank_search")
#: the modes that embed the query (their model calls per request are counted)
EMBEDDING_MODES = ("vector_search", "heta_graph_search", *COMPOSED)
BASE_MODES = ("sql_text_search", "full_text_search", "vector_search", "heta_graph_search")
CONCURRENCY_ROUNDS = 4  # sequential and concurrent take turns, in alternating order (bench_concurrency.throughput)
STAGES = ("build-10k", "raw-10k", "query-10k", "build-100k", "raw-100k", "query-100k")


#: --articles: a smaller corpus for a quick look (the default, None, is every article)
ARTICLE_LIMIT: int | None = None


def articles() -> list[dict]:
    return load_articles()[:ARTICLE_LIMIT]


def recipe(with_graph: bool = True):
    from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
    from heta_framework.common.models import EmbeddingModel
    from heta_framework.kb import KnowledgeModels, Recipe
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name=EMBEDDING)),
        steps=[
            ParseDocuments(),
            SplitDocuments(),
            PersistChunks(),
            EmbedChunks(),
            IndexVectors(),
            IndexFullText(),
            *([HetaGraphProcedure(extractor="nlp", embed_descriptions=False)] if with_graph else []),
        ],
    )


def source_documents(articles: Sequence[dict], copies: range):
    """Copy 0 keeps the article's id; later copies are the same text under ``<id>~<copy>``."""
    from heta_framework.kb import SourceDocument

    return [
        SourceDocument(text=a["text"], id=a["id"] if copy == 0 else f"{a['id']}~{copy}", name=f"{a['id']}.txt")
        for copy in copies
        for a in articles
    ]


def chunk_rows(kb_folder: Path) -> list[tuple[str, str, str]]:
    """(chunk id, document id, text) of every persisted chunk, read with plain sqlite3."""
    with sqlite3.connect(kb_folder / "chunks.sqlite") as db:
        return db.execute("SELECT id, document_id, text FROM chunks ORDER BY rowid").fetchall()


def timed_queries(search: Callable[[str], object], texts: Sequence[str]) -> list[float]:
    search(texts[0])  # warm-up: file caches, lazily loaded models
    seconds = []
    for text in texts:
        started = time.perf_counter()
        search(text)
        seconds.append(time.perf_counter() - started)
    return seconds


# --- stages ----------------------------------------------------------------------------------------


def kb_folder(work: Path, tier: str) -> Path:
    return work / f"kb-{tier}"


async def build_stage(work: Path, tier: str) -> dict:
    from heta_framework.kb import KnowledgeBase

    corpus = articles()
    folder = kb_folder(work, tier)
    if tier == "10k":
        kb = KnowledgeBase.create(folder, recipe())
        sources = source_documents(corpus, range(1))
    else:
        # no graph at 100k: the nlp extractor and graph writes cost ~45 s per 10k chunks, ~7 minutes here
        kb = KnowledgeBase.create(folder, recipe(with_graph=False))
        sources = source_documents(corpus, range(COPIES_AT_100K))
        # the 10k tier already embedded every text the 100k tier repeats: seed the cache with its vectors
        (folder / "embeddings").mkdir(exist_ok=True)
        shutil.copyfile(kb_folder(work, "10k") / "embeddings" / "cache.sqlite", folder / "embeddings" / "cache.sqlite")
    with Timer() as total:
        report = await kb.build(sources)
    kb.close()
    chunks = len(chunk_rows(folder))
    return {
        "documents": len(sources),
        "chunks_total": chunks,
        "seconds": round(total.seconds, 1),
        "issues": len(report.issues),
        "steps": {
            s.name: {"seconds": round(s.seconds, 2), "chunks_per_s": round(chunks / s.seconds, 1) if s.seconds else None, "stats": s.stats}
            for s in report.steps
        },
        "peak_rss_mb": peak_memory_mb(),
    }


def raw_stage(work: Path, tier: str, query_count: int) -> dict:
    """The raw libraries doing each step's and each mode's work on the knowledge base's own chunk texts."""
    import numpy as np

    rows = chunk_rows(kb_folder(work, tier))
    ids, texts = [r[0] for r in rows], [r[2] for r in rows]
    pairs = list(zip(ids, texts))
    queries = [q for q, _ in known_item_queries(articles(), query_count)]
    folder = work / f"raw-{tier}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    out: dict = {"chunks": len(rows), "steps": {}, "latency": {}}

    def step(name: str, library: str, seconds: float) -> None:
        out["steps"][name] = {"library": library, "seconds": round(seconds, 2), "chunks_per_s": round(len(rows) / seconds, 1)}

    with Timer() as t:
        db = raw.sqlite_index(folder / "raw.sqlite", pairs)
    step("persist_chunks", "sqlite3 INSERT + FTS5, one transaction", t.seconds)
    out["latency"]["sql_text_search"] = {"library": "sqlite3 FTS5 MATCH + bm25()", **percentiles_ms(timed_queries(raw.sqlite_searcher(db, DEPTH), queries))}

    with Timer() as t:
        ix = raw.whoosh_index(folder / "whoosh", pairs)
    step("index_full_text", "whoosh writer (StemmingAnalyzer), one commit", t.seconds)
    out["latency"]["full_text_search"] = {"library": "whoosh searcher, BM25F, OR query", **percentiles_ms(timed_queries(raw.whoosh_searcher(ix, DEPTH), queries))}

    model = raw.sentence_transformer()
    raw.encode(model, ["warm up the model and its thread pool"] * 32)
    if tier == "10k":
        vectors, out["embedding_check"] = raw_vectors(kb_folder(work, tier), model, texts, step)
        np.save(work / "raw-vectors-10k.npy", vectors)
        (work / "raw-texts-10k.json").write_text(json.dumps(texts))
    else:
        # the 100k tier repeats the 10k texts: reuse the raw vectors rather than encode 100k chunks again
        by_text = dict(zip(json.loads((work / "raw-texts-10k.json").read_text()), np.load(work / "raw-vectors-10k.npy")))
        vectors = np.stack([by_text[text] for text in texts])
    with Timer() as t:
        index = raw.faiss_flat(vectors, folder / "index.faiss")
    step("index_vectors", "faiss.IndexFlatIP.add + write_index", t.seconds)
    out["latency"]["vector_search"] = {
        "library": "SentenceTransformer.encode(query) + IndexFlatIP.search",
        **percentiles_ms(timed_queries(lambda q: index.search(raw.encode(model, [q]), DEPTH), queries)),
    }

    if tier == "10k":
        with Timer() as t:
            retriever = raw.bm25s_index(texts)
        out["bm25s_index_s"] = round(t.seconds, 2)
        out["quality"] = raw_quality(rows, vectors, index, model, retriever, query_count)
    out["peak_rss_mb"] = peak_memory_mb()
    return out


def raw_vectors(kb_folder: Path, model, texts: Sequence[str], step: Callable[[str, str, float], None]):
    """Plain sentence-transformers vectors for every chunk, encoding only a random sample.

    Encoding all 10k chunks a second time would take a quarter of the time budget
    of ``make bench``, so the raw library encodes a random sample (its throughput
    is the raw embedding figure) and the sample's vectors are checked against the
    knowledge base's embedding cache, chunk by chunk. Only when they agree are the
    cached vectors used for the other chunks of the reference index.
    """
    import hashlib
    import random

    import numpy as np

    sample = sorted(random.Random(0).sample(range(len(texts)), min(RAW_ENCODE_SAMPLE, len(texts))))
    with Timer() as t:
        sampled = raw.encode(model, [texts[i] for i in sample])
    step("embed_chunks", f"SentenceTransformer.encode ({len(sample):,}-chunk random sample)", t.seconds * len(texts) / len(sample))
    from heta_framework.kb.folder_state import SQLiteCache
    from heta_plugin_vector.cache import EmbeddingCache

    hashes = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts]
    # Read through the plugin's own cache view, so the bench follows its storage format.
    store = SQLiteCache(kb_folder / "embeddings" / "cache.sqlite")
    try:
        cached = EmbeddingCache(store).get_many(EMBEDDING, hashes)
    finally:
        store.close()
    difference = max(float(np.abs(cached[hashes[i]] - sampled[row]).max()) for row, i in enumerate(sample))
    if difference > 1e-4:
        raise SystemExit(f"the knowledge base's vectors differ from plain sentence-transformers by {difference}: not using them")
    vectors = np.stack([cached[h] for h in hashes])
    vectors[sample] = sampled
    return vectors, {"sampled_chunks": len(sample), "max_abs_difference_vs_cache": difference}


def raw_quality(rows, vectors, index, model, retriever, query_count: int) -> dict:
    """The plain-library references on the same chunks: documents rank by their best chunk, as in Heta."""
    pairs = known_item_queries(articles(), query_count)
    texts, gold = [q for q, _ in pairs], [g for _, g in pairs]
    documents = [r[1] for r in rows]
    _, found = index.search(raw.encode(model, texts), DEPTH)
    dense = [ranked_documents(documents[i] for i in row if i >= 0) for row in found]
    sparse = [ranked_documents(documents[i] for i in row) for row in raw.bm25s_search(retriever, texts, DEPTH)]
    fused = [raw.rrf([s, d]) for s, d in zip(sparse, dense)]
    return {
        "bm25s": mrr_recall(sparse, gold),
        "sentence_transformers_faiss": mrr_recall(dense, gold),
        "rrf_bm25s_st_faiss": mrr_recall(fused, gold),
        "notes": "bm25s with English stop words; MiniLM + IndexFlatIP; plain RRF k=60 over their top 30",
    }


def result_documents(result) -> list[str]:
    """The documents a result speaks for: its own, or (a graph fact) those of its evidence chunks."""
    if result.document_id:
        return [result.document_id]
    return [e.document_id for e in result.evidence if e.document_id]


def own_cost_ms(node) -> float:
    """A composed mode's own time: its duration minus its slowest direct base search (they run concurrently)."""
    return node.duration_ms - max((child.duration_ms for child in node.children), default=0.0)


def raw_searchers(work: Path, tier: str) -> dict[str, tuple[str, Callable[[str], object]]]:
    """mode -> (library, search) over the files the raw stage wrote for this tier, for alternating timings."""
    folder = work / f"raw-{tier}"
    model = raw.sentence_transformer()
    index = raw.faiss_read(folder / "index.faiss")
    db = sqlite3.connect(folder / "raw.sqlite", check_same_thread=False)
    return {
        "sql_text_search": ("sqlite3 FTS5 MATCH + bm25()", raw.sqlite_searcher(db, DEPTH)),
        "full_text_search": ("whoosh searcher, BM25F, OR query", raw.whoosh_searcher(raw.open_whoosh(folder / "whoosh"), DEPTH)),
        "vector_search": ("SentenceTransformer.encode(query) + IndexFlatIP.search", lambda q: index.search(raw.encode(model, [q]), DEPTH)),
    }, (model, index)


class CountedEmbeddings:
    """Wraps the knowledge base's embedding client: counts model calls; optionally answers from precomputed vectors.

    ``precomputed`` set: the query path without the model (what Heta adds around it), as the issue asks for the
    graph mode's per-query cost.
    """

    def __init__(self, client):
        self.client = client
        self.real_embed = client.embed
        self.calls = 0
        self.precomputed: dict[str, object] | None = None
        client.embed = self.embed

    async def embed(self, texts):
        self.calls += 1
        if self.precomputed is not None and all(t in self.precomputed for t in texts):
            import numpy as np

            return np.stack([self.precomputed[t] for t in texts])
        return await self.real_embed(texts)


async def query_stage(work: Path, tier: str, query_count: int) -> dict:
    from heta_framework.kb import KnowledgeBase

    kb = KnowledgeBase.load(kb_folder(work, tier))
    pairs = known_item_queries(articles(), query_count)
    texts, gold = [t for t, _ in pairs], [g for _, g in pairs]
    out: dict = {"queries": len(pairs), "modes": {}, "unavailable": kb.unavailable_queries(), "load_before": machine_load()}
    searchers, (model, raw_index) = raw_searchers(work, tier)
    counted = CountedEmbeddings(kb.get_component("models.embedding"))

    def heta(mode: str, trace: bool = False, keep: list | None = None) -> Callable[[str], object]:
        async def search(text: str):
            response = await kb.query(text, mode=mode, top_k=DEPTH, trace=trace)
            if keep is not None:
                keep.append(response)
            return response

        return search

    for mode in kb.available_queries:
        responses: list = []
        # the first query of a composed mode calibrates its fusion weights once per build state (40 pseudo-queries,
        # each embedded); counted apart, so the calls per request are a request's own
        calls_before = counted.calls
        await kb.query(texts[0], mode=mode, top_k=DEPTH)
        one_time_calls = counted.calls - calls_before - (1 if mode in EMBEDDING_MODES else 0)
        calls_before = counted.calls
        if mode in searchers:
            library, raw_search = searchers[mode]
            heta_s, raw_s = await alternating(heta(mode, keep=responses), raw_search, texts)
            entry = percentiles_ms(heta_s)
            entry["vs_raw"] = comparison(heta_s, raw_s, library)
        else:
            search = heta(mode, trace=mode in COMPOSED, keep=responses)
            entry = percentiles_ms(await timed(search, texts))
        calls = counted.calls - calls_before
        queries_run = len(responses)  # the warm-up included, for the calls per request
        responses = responses[-len(texts):]  # the warm-up is not scored
        rankings = [ranked_documents(d for r in response.results for d in result_documents(r)) for response in responses]
        if tier == "10k":
            entry.update(mrr_recall(rankings, gold))
        own = [own_cost_ms(r.trace) for r in responses if r.trace is not None]
        if own:
            entry["own_cost_ms"] = percentiles_ms([o / 1000 for o in own])
        if kb.has_component("models.embedding") and mode in EMBEDDING_MODES:
            entry["embedding_calls_per_query"] = round(calls / queries_run, 3)
            if one_time_calls:
                entry["calibration_embedding_calls"] = one_time_calls
        out["modes"][mode] = entry
        print(f"  {tier} {mode:<20} {json.dumps(entry)}", flush=True)

    # without the model: the query vectors precomputed, so what is timed is Heta's own path (and FAISS's)
    counted.precomputed = dict(zip(texts, await counted.real_embed(texts)))
    without: dict = {}
    vector_of = counted.precomputed
    for mode in [m for m in kb.available_queries if m in EMBEDDING_MODES]:
        if mode == "vector_search":
            heta_s, raw_s = await alternating(heta(mode), lambda q: raw_index.search(vector_of[q].reshape(1, -1), DEPTH), texts)
            without[mode] = comparison(heta_s, raw_s, "IndexFlatIP.search (precomputed query vector)")
        else:
            without[mode] = percentiles_ms(await timed(heta(mode), texts))
        print(f"  {tier} {mode:<20} without the model {json.dumps(without[mode])}", flush=True)
    out["without_model"] = without
    counted.precomputed = None  # concurrency is measured with the model, as a server would see it
    # bench_concurrency.py's measure: rounds in alternating order (drift falls on both sides), rankings must match
    out["concurrency"] = {mode: (await throughput(kb, mode, texts, rounds=CONCURRENCY_ROUNDS))[0]
                          for mode in kb.available_queries if mode in BASE_MODES}
    for mode, row in out["concurrency"].items():
        print(f"  {tier} {mode:<20} 8 concurrent {json.dumps(row)}", flush=True)
    out["graph_size"] = graph_size(kb)
    kb.close()
    out["load_after"] = machine_load()
    out["peak_rss_mb"] = peak_memory_mb()
    return out


def graph_size(kb) -> dict:
    if not kb.has_component("stores.graph"):
        return {}
    try:
        return kb.get_component("stores.graph").counts()
    except Exception:  # another graph backend: its size is not part of the measurement
        return {}


# --- orchestration -------------------------------------------------------------------------------------


def run_stage(stage: str, work: Path, query_count: int) -> dict:
    kind, tier = stage.split("-")
    if kind == "build":
        return asyncio.run(build_stage(work, tier))
    if kind == "raw":
        return raw_stage(work, tier, query_count)
    return asyncio.run(query_stage(work, tier, query_count))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="known-item queries at 10k (quality and latency)")
    parser.add_argument("--latency-queries", type=int, default=100, help="queries at 100k (latency only)")
    parser.add_argument("--skip-100k", action="store_true")
    parser.add_argument("--articles", type=int, help="use only the first N articles (a quick look; tiers are then N and 10N)")
    parser.add_argument("--work", type=Path, help="working folder (default: a temporary one, removed afterwards)")
    parser.add_argument("--only", nargs="+", choices=STAGES, metavar="STAGE",
                        help="run only these stages on the knowledge bases an earlier run left in --work, and replace "
                             "just their entries in the results (e.g. --only query-10k query-100k after a query-path change)")
    parser.add_argument("--stage", choices=STAGES, help=argparse.SUPPRESS)  # a child process runs one stage
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    global ARTICLE_LIMIT
    ARTICLE_LIMIT = args.articles

    if args.stage:
        result = run_stage(args.stage, args.work, args.latency_queries if args.stage.endswith("100k") else args.queries)
        (args.work / f"{args.stage}.json").write_text(json.dumps(result, indent=1))
        return

    if args.only and not args.work:
        parser.error("--only needs --work: the folder an earlier run kept its knowledge bases in")
    work = args.work or Path(tempfile.mkdtemp(prefix="heta-bench-modes-"))
    stages = [s for s in STAGES if not (args.skip_100k and s.endswith("100k")) and (not args.only or s in args.only)]
    result: dict = {"recipe": "ParseDocuments, SplitDocuments, PersistChunks, EmbedChunks, IndexVectors, IndexFullText, "
                    'HetaGraphProcedure(extractor="nlp", embed_descriptions=False)', "embedding": EMBEDDING, "stages": {}}
    # only a full run replaces the committed results; a quick look writes beside the knowledge bases
    full_run = not (args.articles or args.skip_100k or args.queries != DEFAULT_QUERIES)
    if args.only:
        # the other stages keep their numbers (`make bench` runs the 10k stages, `run_all.py --all` the 100k ones too)
        previous = RESULTS / "modes.json" if full_run else work / "modes.json"
        if previous.exists():
            result = {**json.loads(previous.read_text()), "recipe": result["recipe"], "embedding": EMBEDDING}
            result.setdefault("stages", {})
            result.setdefault("measured_on", {}).update(result.pop("rerun_stages", {}))  # its name before

    def save() -> Path:
        if full_run:
            return write_result("modes", result)
        path = work / "modes.json"
        path.write_text(json.dumps(result, indent=1))
        return path

    started = time.perf_counter()
    try:
        for stage in stages:
            print(f"== {stage}", flush=True)
            with Timer() as t:
                subprocess.run(
                    [sys.executable, __file__, "--stage", stage, "--work", str(work), "--queries", str(args.queries),
                     "--latency-queries", str(args.latency_queries), *(["--articles", str(args.articles)] if args.articles else [])],
                    check=True,
                )
            result["stages"][stage] = {**json.loads((work / f"{stage}.json").read_text()), "stage_seconds": round(t.seconds, 1)}
            result.setdefault("measured_on", {})[stage] = time.strftime("%Y-%m-%d")
            print(f"   {stage} took {t.seconds:.0f} s", flush=True)
            save()  # a run cut short still leaves its numbers
    finally:
        if not args.work:
            # ~200k small files: removing them takes half a minute that is no part of any measurement
            subprocess.Popen(["rm", "-rf", str(work)], start_new_session=True)
    if not args.only:  # a partial rerun keeps the full run's total
        result["seconds"] = round(time.perf_counter() - started, 1)
    print(f"took {time.perf_counter() - started:.1f} s; wrote {save()}")


if __name__ == "__main__":
    main()
