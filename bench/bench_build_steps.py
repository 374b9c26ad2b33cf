"""persist_chunks and index_vectors against plain sqlite3 / FAISS doing the same work, taking turns in one process.

bench_modes.py compares each step with a raw library that has the chunk texts
(and vectors) in memory already. A step does not: chunks are not held in memory
between steps (a build of any size must fit), so each step reads every
document's chunk file from the object store, and ``index_vectors`` reads the
vectors ``embed_chunks`` left in the embedding cache and writes each chunk's
record (id, provenance) beside the FAISS index, without which a search could
return neither ids nor filter. Here both references run:

- *in memory*: what bench_modes.py times (sqlite3 INSERT + FTS5; FAISS add + write_index);
- *same work*: plain code a user would write for the whole job: ``json.load`` each
  chunk file, then the same INSERT + FTS5; or ``json.load`` each chunk file, read
  the vectors from the cache table with sqlite3, FAISS add + write_index, and
  INSERT one record row per chunk in one transaction.

Each round builds a knowledge base (ParseDocuments, SplitDocuments,
PersistChunks, EmbedChunks, IndexVectors) whose embedding cache is seeded from an
existing bench knowledge base (so ``embed_chunks`` reads vectors, no model call),
then runs the raw references on that knowledge base's own chunk files; rounds
alternate which goes first. Medians of the rounds.

    python bench/bench_build_steps.py --kb /tmp/bm/kb-10k [--rounds 3]

Writes bench/results/build_steps.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_modes import EMBEDDING, articles, source_documents  # noqa: E402
from common import machine_load, write_result  # noqa: E402

CACHE_FILE = Path("embeddings") / "cache.sqlite"


async def heta_round(seed_kb: Path, folder: Path) -> dict[str, float]:
    from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
    from heta_framework.common.models import EmbeddingModel
    from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe

    from heta_plugin_vector import EmbedChunks, IndexVectors

    recipe = Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name=EMBEDDING)),
        steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors()],
    )
    kb = KnowledgeBase.create(folder, recipe)
    (folder / CACHE_FILE).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(seed_kb / CACHE_FILE, folder / CACHE_FILE)
    report = await kb.build(list(source_documents(articles(), range(1))))
    kb.close()
    seconds = {step.name: step.seconds for step in report.steps}
    stats = {step.name: dict(step.stats) for step in report.steps}
    if stats["embed_chunks"].get("embedding_calls"):
        raise SystemExit("embed_chunks called the model: the seed knowledge base's cache does not hold these texts")
    return {"persist_chunks": seconds["persist_chunks"], "index_vectors": seconds["index_vectors"]}


def chunk_files(kb: Path) -> list[Path]:
    return sorted((kb / "objects" / "chunks").glob("*.json"))


def read_chunks(kb: Path) -> list[dict]:
    chunks: list[dict] = []
    for path in chunk_files(kb):
        with open(path, encoding="utf-8") as file:
            chunks.extend(json.load(file))
    return chunks


def raw_persist(chunks: list[dict], path: Path) -> None:
    """The chunk store's schema and FTS5 table, written with plain sqlite3 in one transaction."""
    from heta_framework.builtin.stores.sqlite_chunks import _SCHEMA, fts_body

    db = sqlite3.connect(path, isolation_level=None)
    db.executescript(_SCHEMA)
    db.execute("BEGIN")
    for c in chunks:
        rowid = db.execute(
            "INSERT INTO chunks (id, document_id, chunk_index, text, start, end, source, page, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (c["id"], c["document_id"], c["index"], c["text"], c["start"], c["end"], c["source"], c["page"],
             json.dumps(c["metadata"], ensure_ascii=False)),
        ).lastrowid
        db.execute("INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)", (rowid, fts_body(c["text"])))
    db.execute("COMMIT")
    db.close()


def cached_vectors(kb: Path, chunks: list[dict]) -> np.ndarray:
    from heta_framework.kb.documents import content_hash

    keys = [f"{EMBEDDING}\x1f{content_hash(c['text'])}" for c in chunks]
    found: dict[str, bytes] = {}
    with sqlite3.connect(kb / CACHE_FILE) as db:
        for start in range(0, len(keys), 30000):
            part = keys[start : start + 30000]
            found.update(db.execute(f"SELECT key, value FROM entries WHERE key IN ({','.join('?' * len(part))})", part).fetchall())
    return np.stack([np.frombuffer(found[k], dtype=np.float32) for k in keys])


def raw_index(vectors: np.ndarray, folder: Path, chunks: list[dict] | None = None) -> None:
    """FAISS add + write_index; with ``chunks``, also one record row per vector in one transaction."""
    import faiss

    folder.mkdir(parents=True, exist_ok=True)
    index = faiss.IndexIDMap2(faiss.IndexFlatIP(vectors.shape[1]))
    index.add_with_ids(vectors, np.arange(len(vectors), dtype=np.int64))
    faiss.write_index(index, str(folder / "index.faiss"))
    if chunks is None:
        return
    db = sqlite3.connect(folder / "records.sqlite", isolation_level=None)
    db.execute("CREATE TABLE records (key INTEGER PRIMARY KEY, id TEXT UNIQUE, document_id TEXT, source TEXT, metadata TEXT)")
    db.execute("BEGIN")
    db.executemany(
        "INSERT INTO records VALUES (?, ?, ?, ?, ?)",
        ((key, c["id"], c["document_id"], c["source"],
          json.dumps({k: c[k] for k in ("document_id", "index", "start", "end", "source", "page")}, ensure_ascii=False))
         for key, c in enumerate(chunks)),
    )
    db.execute("COMMIT")
    db.close()


def index_from_files(kb: Path, folder: Path) -> None:
    """index_vectors' whole job in plain code: the chunk files, their cached vectors, FAISS and the records."""
    chunks = read_chunks(kb)
    raw_index(cached_vectors(kb, chunks), folder, chunks)


def timed(function, *args) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


def raw_round(kb: Path, folder: Path) -> dict[str, float]:
    folder.mkdir(parents=True)
    chunks = read_chunks(kb)  # the in-memory references start from texts and vectors already read
    vectors = cached_vectors(kb, chunks)
    return {
        "persist_chunks in memory": timed(raw_persist, chunks, folder / "a.sqlite"),
        "persist_chunks same work": timed(lambda: raw_persist(read_chunks(kb), folder / "b.sqlite")),
        "index_vectors in memory": timed(raw_index, vectors, folder / "faiss-a"),
        "index_vectors same work": timed(index_from_files, kb, folder / "faiss-b"),
    }


async def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=Path, required=True, help="a bench_modes.py 10k knowledge base (its embedding cache seeds each round)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="heta-bench-build-steps-"))
    heta: list[dict[str, float]] = []
    raw: list[dict[str, float]] = []
    load = machine_load()
    try:
        for number in range(args.rounds):
            kb = work / f"kb-{number}"
            if number % 2 == 0:
                heta.append(await heta_round(args.kb, kb))
                raw.append(await asyncio.to_thread(raw_round, kb, work / f"raw-{number}"))
            else:  # the raw side first, on the previous round's knowledge base (the same chunk files)
                raw.append(await asyncio.to_thread(raw_round, work / f"kb-{number - 1}", work / f"raw-{number}"))
                heta.append(await heta_round(args.kb, kb))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    def median(rows: list[dict[str, float]], key: str) -> float:
        return round(statistics.median(row[key] for row in rows), 3)

    chunks = len(read_chunks(args.kb))
    result: dict = {"rounds": args.rounds, "chunks": chunks, "load_before": load, "load_after": machine_load(), "steps": {}}
    for step in ("persist_chunks", "index_vectors"):
        row = {"heta_seconds": median(heta, step)}
        for reference in ("in memory", "same work"):
            seconds = median(raw, f"{step} {reference}")
            row[f"raw_{reference.replace(' ', '_')}_seconds"] = seconds
            row[f"ratio_vs_{reference.replace(' ', '_')}"] = round(seconds / row["heta_seconds"], 2)  # above 1: Heta faster
        result["steps"][step] = row
        print(step, row, flush=True)
    print("written", write_result("build_steps", result))
    return result


if __name__ == "__main__":
    asyncio.run(main())
