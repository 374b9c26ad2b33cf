"""GraphRAG's two modes (heta-plugin-graphrag) beside heta_graph_search, hybrid_search and heta_rerank_search, offline.

The knowledge base is bench_modes.py's recipe (MiniLM + FAISS, Whoosh, the nlp
graph without description embeddings) plus ``detect_communities`` and
``community_reports`` (extractive: no language model), over the first 90% of the
first ``--articles`` English Wikipedia articles (bench/common.py). Then:

- known-item: ``--queries`` queries (an article's short description -> that
  article, seed 0) sampled from the built articles; MRR@10, Recall@10, p50/p95
  of every mode (order rotated per query);
- sensemaking: 14 hand-written questions (below), each with the articles that
  hold its evidence (chosen by title from the built articles); evidence recall
  = gold articles among a mode's top-10 documents / gold articles;
- incremental: the remaining 10% of the articles are added; the build report
  counts the communities re-detected and re-reported, beside the total.

Writes bench/results/graphrag.json.

    python bench/bench_graphrag.py                      # 1000 articles, 200 queries
    python bench/bench_graphrag.py --articles 300 --queries 50
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_modes  # noqa: E402
from common import Timer, known_item_queries, machine_load, mrr_recall, percentiles_ms, ranked_documents, write_result  # noqa: E402

MODES = ("heta_graph_search", "hybrid_search", "heta_rerank_search", "graphrag_global_search", "graphrag_local_search")
DEPTH = bench_modes.DEPTH

#: (question, article ids holding the evidence); every id is among the first 900 articles
SENSEMAKING = [
    ("What natural disasters struck China and how many people died?", ["a00004", "a00007", "a00010"]),
    ("Which great earthquakes and tsunamis are described, and how destructive were they?", ["a00004", "a00005", "a00010", "a00013"]),
    ("How did scholars of the medieval Islamic world contribute to science, medicine and mathematics?",
     ["a00063", "a00216", "a00217", "a00220", "a00221", "a00222", "a00226"]),
    ("Which caliphates and dynasties ruled the early Islamic world and Al-Andalus?", ["a00034", "a00036", "a00037", "a00038", "a00214", "a00325"]),
    ("What characterised ancient Egyptian civilisation, its rulers, gods and monuments?",
     ["a00188", "a00208", "a00408", "a00430", "a00431", "a00432", "a00433", "a00552"]),
    ("What shaped the culture of ancient Greece: its art, architecture, philosophy, literature and religion?",
     ["a00434", "a00435", "a00436", "a00437", "a00438", "a00439", "a00440", "a00443"]),
    ("Which wars and revolutions shaped the history of the United States?", ["a00051", "a00367", "a00368", "a00370", "a00371", "a00460"]),
    ("Which rulers of Russia are described and what were their reigns known for?", ["a00266", "a00267", "a00269", "a00278"]),
    ("What economic crises of the twentieth and twenty-first centuries are described, and what caused them?", ["a00009", "a00014"]),
    ("What is known about the polar regions, their oceans and ice sheets?",
     ["a00512", "a00513", "a00514", "a00515", "a00623", "a00624", "a00625", "a00626"]),
    ("What are the main branches and structures of algebra?", ["a00057", "a00290", "a00291", "a00292", "a00293", "a00294", "a00295", "a00296"]),
    ("Which families of organic compounds are described and how do they differ?",
     ["a00248", "a00253", "a00312", "a00313", "a00314", "a00382", "a00383", "a00653"]),
    ("How do aircraft fly, and how is air travel organised?", ["a00144", "a00195", "a00196", "a00198", "a00199", "a00200", "a00201", "a00202"]),
    ("What political conflicts and movements have shaped the Arab world?", ["a00584", "a00585", "a00598", "a00599"]),
]


def evidence_recall(ranking: list[str], gold: list[str], k: int = 10) -> float:
    return len(set(ranking[:k]) & set(gold)) / len(gold)


async def run_modes(kb, texts: list[str], modes: tuple[str, ...]) -> tuple[dict[str, list[list[str]]], dict[str, list[float]]]:
    rankings: dict[str, list[list[str]]] = {m: [] for m in modes}
    seconds: dict[str, list[float]] = {m: [] for m in modes}
    for position, text in enumerate(texts):
        order = modes[position % len(modes):] + modes[: position % len(modes)]
        for mode in order:
            started = time.perf_counter()
            response = await kb.query(text, mode=mode, top_k=DEPTH)
            seconds[mode].append(time.perf_counter() - started)
            rankings[mode].append(ranked_documents(d for r in response.results for d in bench_modes.result_documents(r)))
    return rankings, seconds


def step_stats(report, name: str) -> dict:
    return next((dict(s.stats) for s in report.steps if s.name == name), {})


async def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--work", type=Path, help="keep the knowledge base here (default: a temporary folder)")
    args = parser.parse_args()
    from heta_framework.kb import KnowledgeBase, Recipe
    from heta_plugin_graphrag import CommunityReports, DetectCommunities

    bench_modes.ARTICLE_LIMIT = args.articles
    corpus = bench_modes.articles()
    base, extra = corpus[: len(corpus) * 9 // 10], corpus[len(corpus) * 9 // 10:]
    queries = known_item_queries(base, args.queries)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-graphrag-"))
    plain = bench_modes.recipe()
    recipe = Recipe(models=plain.models, steps=[*plain.steps, DetectCommunities(), CommunityReports(use_language_model=False)])
    kb = KnowledgeBase.create(work / "kb", recipe)
    with Timer() as build:
        first = await kb.build(bench_modes.source_documents(base, range(1)))
    modes = tuple(m for m in MODES if m in kb.available_queries)
    skipped = [m for m in MODES if m not in modes]
    for mode in modes:  # warm-up: lazily opened files, the model
        await kb.query(queries[0][0], mode=mode, top_k=DEPTH)
    load = machine_load()
    rankings, seconds = await run_modes(kb, [t for t, _ in queries], modes)
    gold = [answer for _, answer in queries]
    available = {a["id"] for a in base}
    sense = [(q, [g for g in ids if g in available]) for q, ids in SENSEMAKING]
    sense = [(q, ids) for q, ids in sense if ids]
    sense_rankings, _ = await run_modes(kb, [q for q, _ in sense], modes)
    detected = step_stats(first, "detect_communities")
    with Timer() as added:
        more = await kb.build(bench_modes.source_documents(extra, range(1)))
    incremental = {
        "articles_added": len(extra),
        "seconds": round(added.seconds, 1),
        **{k: step_stats(more, "detect_communities").get(k) for k in ("communities_redetected", "communities_removed", "components_redetected", "components_kept")},
        **{k: step_stats(more, "community_reports").get(k) for k in ("communities_reported", "community_reports_reused")},
        "communities_after": len(kb.get_component("stores.objects").get_json("graphrag/reports.json")["reports"]),
    }
    result = {
        "articles": len(base),
        "queries": len(queries),
        "depth": DEPTH,
        "build_seconds": round(build.seconds, 1),
        "graph": bench_modes.graph_size(kb),
        "communities": {k: detected.get(k) for k in ("communities_redetected", "components_redetected")},
        "skipped_modes": skipped,
        "load_before": load,
        "load_after": machine_load(),
        "modes": {mode: {**mrr_recall(rankings[mode], gold), **percentiles_ms(seconds[mode])} for mode in modes},
        "sensemaking": {
            "questions": len(sense),
            "evidence_recall@10": {
                mode: round(sum(evidence_recall(r, ids) for r, (_, ids) in zip(sense_rankings[mode], sense)) / len(sense), 3)
                for mode in modes
            },
        },
        "incremental": incremental,
    }
    kb.close()
    path = write_result("graphrag", result)
    for mode, row in result["modes"].items():
        recall = result["sensemaking"]["evidence_recall@10"][mode]
        print(f"{mode:24s} MRR@10 {row['mrr@10']:.3f}  R@10 {row['recall@10']:.3f}  p50 {row['p50_ms']:.1f} ms  "
              f"p95 {row['p95_ms']:.1f} ms  sensemaking evidence R@10 {recall:.3f}")
    print("incremental:", incremental)
    print(f"wrote {path}")
    return result


if __name__ == "__main__":
    asyncio.run(main())
