"""heta_graph_search's per-query cost without the model, on two graphs of different sizes, in turns in one process.

Issue 14: the neighbour filter was a ``json_extract`` scan over every entity row
and evidence chunks were re-tokenised per fact, so a query cost more as the graph
grew. Here the same queries run against a small and a large knowledge base,
alternately, with the query vectors precomputed (the model's cost does not
depend on the graph), so the difference is what the graph's size adds.

Twice: as built (exact FAISS scans of the graph collections, the default ``index =
"flat"``), then on copies whose two graph collections hold the same vectors and ids
in an HNSW index, as a knowledge base built with ``[stores.vector] index = "hnsw"``
(the store's default M, ef_construction and ef_search) would. An exact scan grows
with the number of vectors; an HNSW search barely does. The large graph's
MRR@10 and Recall@10 on its known-item queries are measured both ways, so what
the approximate index costs in quality is beside what it saves.

    python bench/bench_graph_scaling.py SMALL_KB LARGE_KB [--queries 200] [--quality-queries 400]

Both folders are knowledge bases bench_modes.py built (``--work``; e.g. one with
``--articles 3000`` and the 10k tier). Writes bench/results/graph_scaling.json.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_modes import DEPTH, CountedEmbeddings, articles, graph_size, result_documents  # noqa: E402
from common import (  # noqa: E402
    alternating,
    known_item_queries,
    machine_load,
    mrr_recall,
    percentiles_ms,
    ranked_documents,
    write_result,
)

GRAPH_COLLECTIONS = ("graph_entities", "graph_relations")


def hnsw_copy(folder: Path, into: Path) -> Path:
    """A copy of the knowledge base (into the folder ``into``) whose graph collections hold their vectors in HNSW."""
    import faiss
    from heta_framework.kb.atomic import read_json, write_json_atomic
    from heta_plugin_vector.config import FaissStoreConfig

    from heta_plugin_vector import indexes

    shutil.copytree(folder, into)
    config = FaissStoreConfig(index="hnsw")
    for name in GRAPH_COLLECTIONS:
        collection = into / config.path / name
        flat = indexes.read_index(collection / "index.faiss")
        keys, vectors = indexes.all_vectors(flat)
        hnsw = indexes.new_hnsw(vectors.shape[1], config)
        hnsw.add_with_ids(vectors, keys)
        faiss.write_index(hnsw, str(collection / "index.faiss"))
        manifest = read_json(collection / "collection.json")
        write_json_atomic(collection / "collection.json", {**manifest, "requested_index": "hnsw"})
    return into


async def with_query_vectors(folder: Path, texts: list[str]):
    """The knowledge base, its embedding client answering ``texts`` from vectors computed beforehand."""
    from heta_framework.kb import KnowledgeBase

    kb = KnowledgeBase.load(folder)
    counted = CountedEmbeddings(kb.get_component("models.embedding"))
    counted.precomputed = dict(zip(texts, await counted.real_embed(texts)))
    return kb


async def scaling(small: Path, large: Path, texts: list[str]) -> dict:
    bases = [await with_query_vectors(small, texts), await with_query_vectors(large, texts)]

    def search(kb):
        return lambda text: kb.query(text, mode="heta_graph_search", top_k=DEPTH)

    load = machine_load()
    small_s, large_s = await alternating(search(bases[0]), search(bases[1]), texts)
    result = {"queries": len(texts), "load_before": load, "load_after": machine_load()}
    for label, kb, seconds in (("small", bases[0], small_s), ("large", bases[1], large_s)):
        result[label] = {"graph": graph_size(kb), **percentiles_ms(seconds)}
        kb.close()
    result["entities_ratio"] = round(result["large"]["graph"]["entities"] / result["small"]["graph"]["entities"], 2)
    result["p50_ratio"] = round(result["large"]["p50_ms"] / result["small"]["p50_ms"], 2)
    return result


async def quality(folder: Path, pairs: list[tuple[str, str]]) -> dict:
    kb = await with_query_vectors(folder, [text for text, _ in pairs])
    rankings = []
    for text, _ in pairs:
        response = await kb.query(text, mode="heta_graph_search", top_k=DEPTH)
        rankings.append(ranked_documents(d for r in response.results for d in result_documents(r)))
    kb.close()
    return mrr_recall(rankings, [gold for _, gold in pairs])


async def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("small", type=Path)
    parser.add_argument("large", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--quality-queries", type=int, default=400)
    args = parser.parse_args()

    pairs = known_item_queries(articles(), max(args.queries, args.quality_queries))
    texts = [text for text, _ in pairs[: args.queries]]
    work = Path(tempfile.mkdtemp(prefix="heta-bench-graph-scaling-"))
    try:
        small_hnsw, large_hnsw = hnsw_copy(args.small, work / "small-hnsw"), hnsw_copy(args.large, work / "large-hnsw")
        result = {
            "flat": await scaling(args.small, args.large, texts),
            "hnsw": await scaling(small_hnsw, large_hnsw, texts),
            "large_quality": {
                "queries": args.quality_queries,
                "flat": await quality(args.large, pairs[: args.quality_queries]),
                "hnsw": await quality(large_hnsw, pairs[: args.quality_queries]),
            },
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for index in ("flat", "hnsw"):
        row = result[index]
        print(f"{index}: small {row['small']['p50_ms']} ms, large {row['large']['p50_ms']} ms "
              f"(x{row['p50_ratio']} for x{row['entities_ratio']} entities)", flush=True)
    print("large graph quality", result["large_quality"], flush=True)
    print("written", write_result("graph_scaling", result))
    return result


if __name__ == "__main__":
    asyncio.run(main())
