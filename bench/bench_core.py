"""Core: ParseDocuments/SplitDocuments/PersistChunks throughput and sql_text_search latency, beside raw SQLite.

At 10k and 100k chunks of real Wikipedia text (articles repeated under new ids
to reach 100k), in a fresh process per size so peak memory is the build's own.
Writes bench/results/core.json.

    python bench/bench_core.py [--sizes 10000 100000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Timer, load_articles, peak_memory_mb, percentiles_ms, write_result  # noqa: E402

CHUNK_SIZE = 60  # tokens: the articles split into ~2-3 chunks each


def _documents(target_chunks: int):
    from heta_framework.kb import SourceDocument

    articles = load_articles()
    per_article = 1.97  # measured average chunks per article at CHUNK_SIZE
    wanted = round(target_chunks / per_article)
    # cycle through the articles, giving repeats new ids, until there are enough documents
    documents = [
        SourceDocument(text=articles[i % len(articles)]["text"], id=f"{articles[i % len(articles)]['id']}-{i // len(articles)}", name="article.txt")
        for i in range(wanted)
    ]
    return documents, articles


def _raw_sqlite(chunks: list[tuple[str, str]], queries: list[str], folder: Path) -> dict:
    """The same schema and FTS5 index, written and queried with plain sqlite3."""
    from heta_framework.builtin.stores.sqlite_chunks import _SCHEMA, fts_body, fts_match_expression

    db = sqlite3.connect(folder / "raw.sqlite", isolation_level=None)
    db.executescript(_SCHEMA)
    with Timer() as write:
        db.execute("BEGIN")
        for cid, text in chunks:
            rowid = db.execute(
                "INSERT INTO chunks (id, document_id, chunk_index, text, start, end, source, page, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (cid, "d", 0, text, 0, len(text), "s", None, "{}"),
            ).lastrowid
            db.execute("INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)", (rowid, fts_body(text)))
        db.execute("COMMIT")
    latencies = []
    for query in queries:
        start = time.perf_counter()
        db.execute(
            "SELECT chunks.id, bm25(chunks_fts) AS r FROM chunks_fts JOIN chunks ON chunks.rowid = chunks_fts.rowid"
            " WHERE chunks_fts MATCH ? ORDER BY r LIMIT 10",
            (fts_match_expression(query),),
        ).fetchall()
        latencies.append(time.perf_counter() - start)
    return {"persist_chunks_per_s": round(len(chunks) / write.seconds, 1), **percentiles_ms(latencies)}


async def _measure(target: int) -> dict:
    from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
    from heta_framework.kb import KnowledgeBase, Recipe
    from heta_framework.kb.documents import iter_chunks
    from heta_framework.plugins.registry import PluginRegistry

    documents, articles = _documents(target)
    folder = Path(tempfile.mkdtemp(prefix="heta-bench-core-"))
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=CHUNK_SIZE, chunk_overlap=10), PersistChunks()])
    kb = KnowledgeBase.create(folder / "kb", recipe, registry=PluginRegistry.from_plugins([]))
    with Timer() as total:
        report = await kb.build(documents)
    chunk_count = kb.get_component("stores.sql").count()
    steps = {s.name: {"seconds": round(s.seconds, 2), "chunks_per_s": round(chunk_count / s.seconds, 1)} for s in report.steps}
    build_memory = peak_memory_mb()

    rng = random.Random(0)
    queries = [a["description"] or a["title"] for a in rng.sample(articles, 300)]
    latencies = []
    for query in queries:
        start = time.perf_counter()
        await kb.query(query, mode="sql_text_search", top_k=10)
        latencies.append(time.perf_counter() - start)
    chunks = [(c.id, c.text) for key in [f"chunks/{d.id}.json" for d in documents] for c in iter_chunks(kb.objects, [key])]
    raw = _raw_sqlite(chunks, queries, folder)
    heta = percentiles_ms(latencies)
    return {
        "documents": len(documents),
        "chunks": chunk_count,
        "build_seconds": round(total.seconds, 2),
        "steps": steps,
        "peak_memory_mb_after_build": build_memory,
        "sql_text_search": heta,
        "raw_sqlite": raw,
        "persist_ratio_vs_raw": round(steps["persist_chunks"]["chunks_per_s"] / raw["persist_chunks_per_s"], 3),
        "query_p50_overhead_ms": round(heta["p50_ms"] - raw["p50_ms"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # child process: measure one size
    args = parser.parse_args()
    if args.one:
        print(json.dumps(asyncio.run(_measure(args.one))))
        return
    results = {}
    for size in args.sizes:
        output = subprocess.run([sys.executable, __file__, "--one", str(size)], check=True, capture_output=True, text=True).stdout
        results[str(size)] = json.loads(output.strip().splitlines()[-1])
        r = results[str(size)]
        print(
            f"{r['chunks']:>7} chunks: build {r['build_seconds']}s, "
            + ", ".join(f"{k} {v['chunks_per_s']}/s" for k, v in r["steps"].items())
            + f"; persist vs raw sqlite {r['persist_ratio_vs_raw']}x; sql_text_search p50 {r['sql_text_search']['p50_ms']} ms"
            f" (raw {r['raw_sqlite']['p50_ms']} ms), p95 {r['sql_text_search']['p95_ms']} ms; peak {r['peak_memory_mb_after_build']} MB"
        )
    print(f"wrote {write_result('core', results)}")


if __name__ == "__main__":
    main()
