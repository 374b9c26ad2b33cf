"""The FAISS vector store (heta-plugin-vector) alone: search overhead at 100k and scale at 1M, beside raw FAISS.

Quality and EmbedChunks/IndexVectors throughput on Wikipedia are measured by
bench_modes.py, on the knowledge base that holds every mode.

1. Overhead — store search latency (query embedding excluded) against raw
   ``IndexFlatIP.search`` at 100k synthetic 384-d vectors.
2. Scale — 1M clustered synthetic 384-d vectors in the approximate index (IVF by
   default), in a child process so peak memory is its own: build time, peak RSS,
   p50/p95 latency, recall@10 against exact search.

Writes bench/results/vector.json and prints a table.

    python bench/bench_vector.py            # full run (about 8 minutes on 2 cores)
    python bench/bench_vector.py --quick    # small sizes, a minute or two
    python bench/bench_vector.py --scale-index hnsw
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Timer, peak_memory_mb, percentiles_ms, write_result  # noqa: E402

DIMENSION = 384


# --- synthetic vectors -------------------------------------------------------------------


def clustered(n: int, seed: int, centres: int = 2000, dimension: int = DIMENSION, batch: int = 100_000) -> np.ndarray:
    """Unit vectors around ``centres`` random centres: neighbourhoods like real embeddings have."""
    centre_rng = np.random.default_rng(1234)  # the same centres for data and queries
    centre_vectors = centre_rng.standard_normal((centres, dimension), dtype=np.float32)
    rng = np.random.default_rng(seed)
    out = np.empty((n, dimension), dtype=np.float32)
    for start in range(0, n, batch):
        end = min(n, start + batch)
        out[start:end] = centre_vectors[rng.integers(0, centres, end - start)]
        out[start:end] += 0.6 * rng.standard_normal((end - start, dimension), dtype=np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def _exact_top(data: np.ndarray, queries: np.ndarray, k: int = 10) -> np.ndarray:
    scores = queries @ data.T
    return np.argsort(-scores, axis=1)[:, :k]


# --- 2b: search latency at 100k ------------------------------------------------------------


def latency_at(n: int, query_count: int, folder: Path) -> dict:
    import faiss

    from heta_plugin_vector import FaissStoreConfig, FaissVectorStore

    data = clustered(n, seed=1)
    queries = clustered(query_count, seed=2)
    raw = faiss.IndexFlatIP(DIMENSION)
    raw.add(data)
    store = FaissVectorStore.open(FaissStoreConfig(index="flat"), folder)
    collection = store.collection("chunks", dimension=DIMENSION)
    for start in range(0, n, 50_000):
        end = min(n, start + 50_000)
        collection.upsert(
            [f"c{i}" for i in range(start, end)],
            data[start:end],
            [{"document_id": f"d{i // 3}", "text": f"chunk {i}", "start": 0, "end": 10} for i in range(start, end)],
        )
    store.flush()

    def once(search, q) -> float:
        start = time.perf_counter()
        search(q[None])
        return time.perf_counter() - start

    def raw_search(q):
        return raw.search(q, 10)

    def heta_search(q):
        return collection.search(q, 10)

    # one query at a time, one FAISS thread on both sides: OpenMP spin-waiting on a shared,
    # loaded 2-core machine otherwise dominates single-query timings (10-20 ms of noise).
    # Raw and Heta alternate query by query so that load changes hit both equally.
    faiss.omp_set_num_threads(1)
    for q in queries[:10]:
        raw_search(q[None]), heta_search(q[None])  # warm caches
    raw_seconds, heta_seconds = [], []
    for i, q in enumerate(queries):
        pair = (raw_search, heta_search) if i % 2 == 0 else (heta_search, raw_search)
        first, second = once(pair[0], q), once(pair[1], q)
        raw_seconds.append(first if i % 2 == 0 else second)
        heta_seconds.append(second if i % 2 == 0 else first)
    filtered_seconds = [once(lambda v: collection.search(v, 10, {"document_id": ["d1", "d200", "d3000"]}), q) for q in queries]
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    raw_p, heta_p = percentiles_ms(raw_seconds), percentiles_ms(heta_seconds)
    per_query = [h - r for h, r in zip(heta_seconds, raw_seconds)]
    same = np.mean([
        [h.id for h in collection.search(q[None], 10)[0]] == [f"c{i}" for i in raw.search(q[None], 10)[1][0]]
        for q in queries[:50]
    ])
    store.close()
    return {
        "vectors": n,
        "raw_faiss_flat": raw_p,
        "heta_store_search": heta_p,
        "heta_filtered_search": percentiles_ms(filtered_seconds),
        "faiss_threads": 1,
        "overhead_p50_ms": round(heta_p["p50_ms"] - raw_p["p50_ms"], 3),
        "overhead_p95_ms": round(heta_p["p95_ms"] - raw_p["p95_ms"], 3),
        "per_query_overhead_median_ms": round(float(np.median(per_query)) * 1000, 3),
        "same_results_as_raw": float(same),
    }


# --- 3: scale (child process) ----------------------------------------------------------------


def scale(n: int, index: str, query_count: int, folder: Path) -> dict:
    from heta_plugin_vector import FaissStoreConfig, FaissVectorStore

    config = FaissStoreConfig(index=index, nlist=1024, nprobe=32, hnsw_m=16, ef_construction=64, ef_search=64)
    queries = clustered(query_count, seed=2)
    data = clustered(n, seed=1)
    store = FaissVectorStore.open(config, folder)
    collection = store.collection("chunks", dimension=DIMENSION)
    batch = 100_000
    with Timer() as build:
        for start in range(0, n, batch):
            end = min(n, start + batch)
            collection.upsert(
                [f"c{i}" for i in range(start, end)], data[start:end], [{"document_id": f"d{i // 3}"} for i in range(start, end)]
            )
        store.flush()
    assert collection.index_kind == index, collection.index_kind
    index_bytes = (folder / "vectors" / "chunks" / "index.faiss").stat().st_size
    peak = peak_memory_mb()
    import faiss

    faiss.omp_set_num_threads(1)  # single-query latency, as in latency_at
    for q in queries[:10]:
        collection.search(q[None], 10)
    seconds, found = [], []
    for q in queries:
        start = time.perf_counter()
        hits = collection.search(q[None], 10)[0]
        seconds.append(time.perf_counter() - start)
        found.append({int(h.id[1:]) for h in hits})
    exact = _exact_top(data, queries)
    recall = float(np.mean([len(f & set(e.tolist())) / 10 for f, e in zip(found, exact)]))
    with Timer() as reopen:
        store.close()
        reopened = FaissVectorStore.open(config, folder).collection("chunks")
    return {
        "vectors": n,
        "dimension": DIMENSION,
        "index": index,
        "parameters": (
            {"nlist": config.nlist, "nprobe": config.nprobe}
            if index == "ivf"
            else {"hnsw_m": config.hnsw_m, "ef_construction": config.ef_construction, "ef_search": config.ef_search}
        ),
        "build_s": round(build.seconds, 1),
        "peak_rss_mb": peak,
        "index_file_mb": round(index_bytes / 2**20, 1),
        "latency": percentiles_ms(seconds),
        "latency_threads": 1,
        "recall@10_vs_exact": round(recall, 4),
        "reopen_s": round(reopen.seconds, 1),
        "reopened_vectors": len(reopened),
    }


def _scale_in_child(n: int, index: str, query_count: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scale.json"
        subprocess.run(
            [sys.executable, __file__, "--child-scale", str(n), "--scale-index", index, "--scale-queries", str(query_count), "--child-out", str(out)],
            check=True,
        )
        return json.loads(out.read_text())


# --- report ---------------------------------------------------------------------------------


def print_table(result: dict) -> None:
    rows = []
    lat = result.get("latency")
    if lat:
        rows += [
            (f"latency @{lat['vectors']}: raw IndexFlatIP p50/p95 ms", f"{lat['raw_faiss_flat']['p50_ms']} / {lat['raw_faiss_flat']['p95_ms']}"),
            (f"latency @{lat['vectors']}: store search p50/p95 ms", f"{lat['heta_store_search']['p50_ms']} / {lat['heta_store_search']['p95_ms']}"),
            ("latency: overhead p50/p95 ms (target <= 1)", f"{lat['overhead_p50_ms']} / {lat['overhead_p95_ms']}"),
            ("latency: per-query overhead median ms", f"{lat['per_query_overhead_median_ms']}"),
            ("latency: filtered search p50/p95 ms", f"{lat['heta_filtered_search']['p50_ms']} / {lat['heta_filtered_search']['p95_ms']}"),
        ]
    s = result.get("scale")
    if s:
        rows += [
            (f"scale: {s['vectors']} x {s['dimension']} {s['index']} build s", f"{s['build_s']}"),
            ("scale: peak RSS MB / index file MB", f"{s['peak_rss_mb']} / {s['index_file_mb']}"),
            ("scale: p50 / p95 ms", f"{s['latency']['p50_ms']} / {s['latency']['p95_ms']}"),
            ("scale: recall@10 vs exact", f"{s['recall@10_vs_exact']}"),
        ]
    width = max((len(r[0]) for r in rows), default=0)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: 20k/100k vectors")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--scale-size", type=int, default=None, help="vectors in the scale test (default 1,000,000)")
    parser.add_argument("--scale-index", choices=["ivf", "hnsw"], default="ivf")
    parser.add_argument("--scale-queries", type=int, default=500)
    parser.add_argument("--latency-size", type=int, default=None, help="vectors in the latency test (default 100,000)")
    parser.add_argument("--child-scale", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child_scale:
        with tempfile.TemporaryDirectory() as tmp:
            data = scale(args.child_scale, args.scale_index, args.scale_queries, Path(tmp))
        Path(args.child_out).write_text(json.dumps(data))
        return

    started = time.perf_counter()
    result: dict = {"machine": {"cpus": os.cpu_count()}, "quick": args.quick}
    if not args.skip_scale:
        size = args.scale_size or (100_000 if args.quick else 1_000_000)
        result["scale"] = _scale_in_child(size, args.scale_index, args.scale_queries)
        write_result("vector", result)  # partial results survive an interrupted run
    with tempfile.TemporaryDirectory() as tmp:
        result["latency"] = latency_at(args.latency_size or (20_000 if args.quick else 100_000), 300, Path(tmp) / "latency")
    result["seconds"] = round(time.perf_counter() - started, 1)
    path = write_result("vector", result)
    print_table(result)
    print(f"total {result['seconds']} s; wrote {path}")


if __name__ == "__main__":
    main()
