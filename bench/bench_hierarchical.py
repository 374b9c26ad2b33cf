"""HiRAG's and LeanRAG's modes (heta-plugin-hirag, heta-plugin-leanrag) beside hybrid_search, heta_rerank_search,
graphrag_global_search and lightrag_mix, offline; then their language-model cost against a scripted model.

Two stages (``--only`` one of them; each stage's part of the result is kept when the other runs):

``offline``  bench_modes.py's recipe (MiniLM + FAISS, Whoosh, the nlp graph without description embeddings)
             plus GraphRAG (``detect_communities``, ``community_reports``, extractive), HiRAG
             (``hirag_hierarchical_aggregation``, ``hirag_community``, ``hirag_bridges``, extractive summaries
             and reports) and LeanRAG (``leanrag_aggregate``, extractive aggregates); LightRAG needs only the
             graph. No language model. Built over the first 90% of the first ``--articles`` English Wikipedia
             articles (bench/common.py); the build report's seconds per step. Then, as bench_graphrag.py
             (its sensemaking questions, ranking and evidence recall are imported from it):
             - known-item: ``--queries`` queries (an article's short description -> that article, seed 0)
               sampled from the built articles; MRR@10, Recall@10, p50/p95 of every row (a mode, with its
               options: lean_rag_query once per ``level_mode``), the rows' order rotated per query;
             - sensemaking: bench_graphrag's 14 hand-written questions with gold article ids; evidence
               recall@10 = gold articles among a row's top-10 documents / gold articles;
             - incremental: the remaining 10% of the articles are added; every step's seconds and counts
               (clusters and communities re-summarised, reports reused, bridges recomputed).
             A document ranks by its best result (a chunk's document; a graph fact's or an aggregate's
             evidence chunks' documents), as in bench_graphrag.py. HiRAG modes run with
             ``llm_answer: False`` (no model: the context alone, without the ``hirag_no_language_model`` issue).
``llm``      the same recipe without GraphRAG, over the first 90% of ``--llm-articles`` articles, with a
             scripted OpenAI-compatible model on 127.0.0.1 (heta_framework.testing.http.ScriptedServer,
             the real ``openai`` client through heta-plugin-openai) answering every HiRAG and LeanRAG question
             validly for its JSON schema (the plugins' own test models: heta_plugin_hirag.testing,
             heta_plugin_leanrag.testing). The graph stays nlp (no model call). The server counts the
             requests per question kind: calls per chunk, then after adding the remaining 10%: clusters
             re-summarised and calls made. The same corpus is also built offline, for the build time the
             model adds (the scripted model answers at once: this is the framework's overhead per call,
             not a real model's latency).

Writes bench/results/hierarchical.json.

    python bench/bench_hierarchical.py                                   # both stages: 1000 articles offline, 100 with the model
    python bench/bench_hierarchical.py --only offline --articles 2000 --queries 200
    python bench/bench_hierarchical.py --only offline --articles 1000 --offline-key offline_1000   # a second tier beside it
    python bench/bench_hierarchical.py --only llm --llm-articles 100
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_modes  # noqa: E402
from bench_graphrag import DEPTH, SENSEMAKING, evidence_recall  # noqa: E402
from common import RESULTS, Timer, known_item_queries, machine_load, mrr_recall, percentiles_ms, ranked_documents, write_result  # noqa: E402

NAME = "hierarchical"
NO_ANSWER = {"llm_answer": False}
#: (row, mode, options): the baselines, HiRAG's five modes, lean_rag_query at each level_mode
ROWS = (
    ("hybrid_search", "hybrid_search", {}),
    ("heta_rerank_search", "heta_rerank_search", {}),
    ("graphrag_global_search", "graphrag_global_search", {}),
    ("lightrag_mix", "lightrag_mix", {}),
    ("hi_rag_query", "hi_rag_query", NO_ANSWER),
    ("hi_rag_nobridge_query", "hi_rag_nobridge_query", NO_ANSWER),
    ("hi_rag_local_query", "hi_rag_local_query", NO_ANSWER),
    ("hi_rag_global_query", "hi_rag_global_query", NO_ANSWER),
    ("hi_rag_bridge_query", "hi_rag_bridge_query", NO_ANSWER),
    ("lean_rag_query level_mode=0", "lean_rag_query", {"level_mode": 0}),
    ("lean_rag_query level_mode=1", "lean_rag_query", {"level_mode": 1}),
    ("lean_rag_query level_mode=2", "lean_rag_query", {"level_mode": 2}),
)
HIRAG_STEPS = ("hirag_hierarchical_aggregation", "hirag_community", "hirag_bridges")
LEANRAG_STEPS = ("leanrag_aggregate",)
ROUTE = "chat/completions"


def hierarchical_steps(with_graphrag: bool) -> list:
    from heta_plugin_graphrag import CommunityReports, DetectCommunities
    from heta_plugin_hirag import HierarchicalAggregation, HiRagBridges, HiRagCommunity
    from heta_plugin_leanrag import SemanticAggregation

    graphrag = [DetectCommunities(), CommunityReports(use_language_model=False)] if with_graphrag else []
    return [*graphrag, HierarchicalAggregation(), HiRagCommunity(), HiRagBridges(), SemanticAggregation()]


def recipe(models=None, with_graphrag: bool = True):
    from heta_framework.kb import Recipe

    plain = bench_modes.recipe()
    return Recipe(models=models or plain.models, steps=[*plain.steps, *hierarchical_steps(with_graphrag)])


def steps_report(report) -> dict[str, dict]:
    """Every step of a build report: seconds and its counts (a repeated name gets its key)."""
    rows: dict[str, dict] = {}
    for step in report.steps:
        name = step.name if step.name not in rows else step.key
        rows[name] = {"seconds": round(step.seconds, 2), **dict(step.stats)}
    return rows


def issue_codes(report) -> dict[str, int]:
    return dict(Counter(issue.code for issue in report.issues))


def stored(objects, key: str) -> dict:
    return objects.get_json(key) if objects.exists(key) else {}


def structure(kb) -> dict:
    """What the hierarchical steps stored: summary entities per layer, communities, bridges, aggregates per level."""
    objects = kb.get_component("stores.objects")
    out: dict[str, Any] = {"graph": bench_modes.graph_size(kb)}
    hierarchy = stored(objects, "hirag/hierarchy.json")
    layers = hierarchy.get("layers", [])
    out["hirag_summary_entities_per_layer"] = [sum(1 for c in layer.get("clusters", []) if c.get("summary")) for layer in layers]
    out["hirag_communities"] = len(stored(objects, "hirag/reports.json").get("reports", {}))
    bridges = stored(objects, "hirag/bridges.json").get("bridges", {})
    out["hirag_bridges"] = sum(len(found) for found in bridges.values())
    lean = stored(objects, "leanrag/hierarchy.json")
    levels = Counter(a["level"] for a in lean.get("aggregates", {}).values())
    out["leanrag_aggregates_per_level"] = [levels[level] for level in sorted(levels)]
    out["leanrag_relations"] = len(lean.get("relations", {}))
    if objects.exists("graphrag/reports.json"):
        out["graphrag_communities"] = len(stored(objects, "graphrag/reports.json")["reports"])
    return out


async def run_rows(kb, texts: list[str], rows=ROWS) -> tuple[dict[str, list[list[str]]], dict[str, list[float]]]:
    """Every text in every row, the rows' order rotated per text; each row's document rankings and seconds."""
    rankings: dict[str, list[list[str]]] = {row: [] for row, _, _ in rows}
    seconds: dict[str, list[float]] = {row: [] for row, _, _ in rows}
    for position, text in enumerate(texts):
        order = rows[position % len(rows):] + rows[: position % len(rows)]
        for row, mode, options in order:
            started = time.perf_counter()
            response = await kb.query(text, mode=mode, top_k=DEPTH, options=options or None)
            seconds[row].append(time.perf_counter() - started)
            rankings[row].append(ranked_documents(d for r in response.results for d in bench_modes.result_documents(r)))
    return rankings, seconds


def mean(values) -> float:
    values = list(values)
    return round(sum(values) / len(values), 2) if values else 0.0


async def offline_stage(articles: int, query_count: int, work: Path) -> dict:
    from heta_framework.kb import KnowledgeBase

    bench_modes.ARTICLE_LIMIT = articles
    corpus = bench_modes.articles()
    base, extra = corpus[: len(corpus) * 9 // 10], corpus[len(corpus) * 9 // 10:]
    queries = known_item_queries(base, query_count)
    kb = KnowledgeBase.create(work / "kb-offline", recipe())
    load_build = machine_load()
    with Timer() as build:
        first = await kb.build(bench_modes.source_documents(base, range(1)))
    print(f"built {len(base)} articles in {build.seconds:.1f} s", flush=True)
    missing = [mode for _, mode, _ in ROWS if mode not in kb.available_queries]
    if missing:
        raise SystemExit(f"modes not available: {missing}")
    for _, mode, options in ROWS:  # warm-up: lazily opened files, the model, parsed hierarchies
        await kb.query(queries[0][0], mode=mode, top_k=DEPTH, options=options or None)
    load = machine_load()
    rankings, seconds = await run_rows(kb, [t for t, _ in queries])
    gold = [answer for _, answer in queries]
    available = {a["id"] for a in base}
    sense = [(q, [g for g in ids if g in available]) for q, ids in SENSEMAKING]
    sense = [(q, ids) for q, ids in sense if ids]
    sense_rankings, _ = await run_rows(kb, [q for q, _ in sense])
    built = structure(kb)
    print("queries done", flush=True)
    with Timer() as added:
        more = await kb.build(bench_modes.source_documents(extra, range(1)))
    after = structure(kb)
    kb.close()
    rows = {}
    for row, _, _ in ROWS:
        rows[row] = {
            **mrr_recall(rankings[row], gold),
            **percentiles_ms(seconds[row]),
            "mean_documents": mean(len(r) for r in rankings[row]),
            "sensemaking_evidence_recall@10": round(sum(evidence_recall(r, ids) for r, (_, ids) in zip(sense_rankings[row], sense)) / len(sense), 3),
            "sensemaking_mean_documents": mean(len(r) for r in sense_rankings[row]),
        }
    # the HiRAG modes rank the chosen entities' evidence chunks first and only then what their other sections add:
    # the share of queries whose top-10 documents are those of hi_rag_local_query (entities and relations only)
    for row, _, _ in ROWS:
        if row.startswith("hi_rag") and row != "hi_rag_local_query":
            rows[row]["same_top10_as_hi_rag_local_query"] = round(mean(
                a[:10] == b[:10] for a, b in zip(rankings[row] + sense_rankings[row], rankings["hi_rag_local_query"] + sense_rankings["hi_rag_local_query"])), 3)
    sense_detail = {row: [round(evidence_recall(r, ids), 3) for r, (_, ids) in zip(sense_rankings[row], sense)] for row, _, _ in ROWS}
    return {
        "articles": len(base),
        "articles_tier": articles,
        "queries": len(queries),
        "depth": DEPTH,
        "build_seconds": round(build.seconds, 1),
        "build_steps": steps_report(first),
        "build_issues": issue_codes(first),
        "built": built,
        "load_build": load_build,
        "load_before": load,
        "load_after": machine_load(),
        "rows": rows,
        "sensemaking": {"questions": len(sense), "per_question": sense_detail, "texts": [q for q, _ in sense]},
        "incremental": {
            "articles_added": len(extra),
            "seconds": round(added.seconds, 1),
            "steps": steps_report(more),
            "issues": issue_codes(more),
            "after": after,
        },
    }


# --- the scripted language model -------------------------------------------------------------------


def question_kind(request) -> str:
    """Which question a chat request asks, from its response_format's JSON schema."""
    from heta_plugin_leanrag.testing import schema_fields

    fields = schema_fields(request)
    if fields == {"name", "type", "description"}:
        return "hirag_summary"
    if "title" in fields and "findings" in fields:
        return "hirag_report"
    if fields == {"name", "description", "findings"}:
        return "leanrag_aggregate"
    if fields == {"description"}:
        return "leanrag_relation"
    return "other"


class ScriptedHierarchyModel:
    """A valid answer to every HiRAG and LeanRAG build question (the plugins' own scripted test models)."""

    def __init__(self) -> None:
        from heta_plugin_hirag.testing import ScriptedHiRagModel
        from heta_plugin_leanrag.testing import AggregationModel

        self.hirag, self.leanrag = ScriptedHiRagModel(), AggregationModel()

    def __call__(self, request):
        from heta_framework.testing.http import Reply, openai_error_body

        kind = question_kind(request)
        if kind.startswith("hirag"):
            return self.hirag(request)
        if kind.startswith("leanrag"):
            return self.leanrag(request)
        return Reply(status=400, body=openai_error_body(f"unexpected question: {sorted(request.json or {})}"))


def count_requests(server) -> dict[str, int]:
    """Requests per question kind; ``*_retries``: those asked again with the validation error (more than 2 messages)."""
    counts: Counter = Counter()
    for request in server.requests_to(ROUTE):
        kind = question_kind(request)
        counts[kind] += 1
        if len((request.json or {}).get("messages", [])) > 2:
            counts[f"{kind}_retries"] += 1
    return dict(counts)


def difference(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in sorted(set(after) | set(before)) if after.get(k, 0) - before.get(k, 0)}


def per_chunk(calls: dict[str, int], chunks: int) -> dict[str, float]:
    hirag = sum(v for k, v in calls.items() if k.startswith("hirag") and not k.endswith("_retries"))
    leanrag = sum(v for k, v in calls.items() if k.startswith("leanrag") and not k.endswith("_retries"))
    return {"hirag": round(hirag / chunks, 3), "leanrag": round(leanrag / chunks, 3),
            **{k: round(v / chunks, 3) for k, v in calls.items() if not k.endswith("_retries")}}


async def llm_stage(articles: int, work: Path) -> dict:
    from heta_framework.kb import KnowledgeBase
    from heta_framework.testing.http import ScriptedServer
    from heta_plugin_graph.testing import scripted_language_models

    bench_modes.ARTICLE_LIMIT = articles
    corpus = bench_modes.articles()
    base, extra = corpus[: len(corpus) * 9 // 10], corpus[len(corpus) * 9 // 10:]
    # the same corpus and steps offline first: the build time the model's questions add
    offline = KnowledgeBase.create(work / "kb-llm-offline", recipe(with_graphrag=False))
    with Timer() as offline_build:
        offline_first = await offline.build(bench_modes.source_documents(base, range(1)))
    with Timer() as offline_added:
        offline_more = await offline.build(bench_modes.source_documents(extra, range(1)))
    offline.close()
    with ScriptedServer() as server:
        server.respond(ROUTE, ScriptedHierarchyModel())
        kb = KnowledgeBase.create(work / "kb-llm", recipe(scripted_language_models(server), with_graphrag=False))
        with Timer() as build:
            first = await kb.build(bench_modes.source_documents(base, range(1)))
        chunks = len(bench_modes.chunk_rows(work / "kb-llm"))
        calls_first = count_requests(server)
        built = structure(kb)
        with Timer() as repeat:
            again = await kb.build(bench_modes.source_documents(base, range(1)), rebuild=True)
        calls_repeat = difference(count_requests(server), calls_first)
        before_add = count_requests(server)
        with Timer() as added:
            more = await kb.build(bench_modes.source_documents(extra, range(1)))
        chunks_after = len(bench_modes.chunk_rows(work / "kb-llm"))
        calls_added = difference(count_requests(server), before_add)
        after = structure(kb)
        unexpected = server.unanswered + [r for r in server.requests_to(ROUTE) if question_kind(r) == "other"]
        max_in_flight = server.max_in_flight
        kb.close()
    return {
        "articles": len(base),
        "articles_tier": articles,
        "chunks": chunks,
        "build_seconds": round(build.seconds, 1),
        "build_steps": steps_report(first),
        "build_issues": issue_codes(first),
        "offline_build_seconds": round(offline_build.seconds, 1),
        "offline_build_steps": steps_report(offline_first),
        "built": built,
        "calls": calls_first,
        "calls_per_chunk": per_chunk(calls_first, chunks),
        "max_in_flight": max_in_flight,
        "unexpected_requests": len(unexpected),
        # the same documents again with rebuild=True: answers are cached by content, so calls here mean content changed
        "rebuild": {"seconds": round(repeat.seconds, 1), "calls": calls_repeat, "issues": issue_codes(again),
                    "steps": {k: v for k, v in steps_report(again).items() if k in HIRAG_STEPS + LEANRAG_STEPS}},
        "incremental": {
            "articles_added": len(extra),
            "chunks_added": chunks_after - chunks,
            "seconds": round(added.seconds, 1),
            "offline_seconds": round(offline_added.seconds, 1),
            "steps": steps_report(more),
            "offline_steps": steps_report(offline_more),
            "issues": issue_codes(more),
            "calls": calls_added,
            "calls_per_added_chunk": per_chunk(calls_added, max(1, chunks_after - chunks)),
            "after": after,
        },
    }


def previous() -> dict:
    path = RESULTS / f"{NAME}.json"
    return json.loads(path.read_text()) if path.exists() else {}


def print_offline(part: dict) -> None:
    print(f"offline: {part['articles']} articles, build {part['build_seconds']} s")
    for step, row in part["build_steps"].items():
        print(f"  {step:34s} {row['seconds']:8.2f} s")
    for row, values in part["rows"].items():
        print(f"{row:30s} MRR@10 {values['mrr@10']:.3f}  R@10 {values['recall@10']:.3f}  p50 {values['p50_ms']:.1f} ms  "
              f"p95 {values['p95_ms']:.1f} ms  sensemaking R@10 {values['sensemaking_evidence_recall@10']:.3f}")
    print("incremental:", json.dumps(part["incremental"], indent=1))


async def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=1000, help="the offline stage's tier (90%% built first, 10%% added)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--llm-articles", type=int, default=100, help="the llm stage's tier")
    parser.add_argument("--only", choices=("offline", "llm"), help="one stage (the other's stored part is kept)")
    parser.add_argument("--offline-key", default="offline",
                        help="the key the offline stage's result is stored under (another tier beside it: offline_1000)")
    parser.add_argument("--work", type=Path, help="keep the knowledge bases here (default: a temporary folder)")
    parser.add_argument("--no-write", action="store_true", help="print, do not write the result (a smoke run)")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-hierarchical-"))
    result = {k: v for k, v in previous().items() if k != "written_at"}
    if args.only in (None, "offline"):
        result[args.offline_key] = await offline_stage(args.articles, args.queries, work)
        print_offline(result[args.offline_key])
    if args.only in (None, "llm"):
        result["llm"] = await llm_stage(args.llm_articles, work)
        print("llm:", json.dumps(result["llm"], indent=1))
    if args.no_write:
        return result
    path = write_result(NAME, result)
    print(f"wrote {path}")
    return result


if __name__ == "__main__":
    asyncio.run(main())
