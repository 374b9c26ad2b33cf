"""Graph (heta-plugin-graph): LLM calls per chunk, extraction throughput vs concurrency, the offline extractor at 10k chunks.

1. LLM calls — Wikipedia articles built with ``HetaGraphProcedure()`` (LLM
   extraction, semantic dedup) through the real ``openai`` client against a
   scripted OpenAI-compatible server on 127.0.0.1 (it answers with the entities
   and co-occurrences the offline extractor finds, so answers are realistic).
   Counts: extraction calls per chunk on the first build, calls on a rebuild
   (cache), calls on resuming an interrupted build, calls to delete documents.
2. Throughput vs ``concurrency`` (1, 4, 16, 32): ExtractEntities +
   ExtractRelations against the same server answering every request after 500 ms.
3. The offline extractor (``extractor="nlp"``) on 10k Wikipedia chunks:
   extraction alone (ExtractEntities + ExtractRelations steps), then the whole
   graph build. Embedding is reported apart, never hidden: the build's own
   ``embedding_ms`` with a feature-hashing embedder (so the SQLite/FAISS/dedup
   work is measured at full scale), plus the local MiniLM model's measured rate on
   a sample of the real entity/relation texts and the time it would need for all.

Writes bench/results/graph.json.

    python bench/bench_graph.py            # about 5 minutes on 2 cores
    python bench/bench_graph.py --quick    # smaller sizes
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Timer, load_articles, peak_memory_mb, write_result  # noqa: E402

MODEL = "local/all-MiniLM-L6-v2"


# --- components ------------------------------------------------------------------------


class HashingEmbedder:
    """Feature hashing of words: deterministic, instant, no weights. Used where embedding is not what is measured."""

    dimension = 256

    def __init__(self, config=None):
        self.model_name = "bench/hashing"

    async def embed(self, texts):
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, hash(word) % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


def registry():
    import heta_plugin_local
    import heta_plugin_openai
    from heta_framework.common.models import ModelProvider
    from heta_framework.testing import inline_plugin, make_registry

    import heta_plugin_graph
    import heta_plugin_vector

    hashing = ModelProvider(name="bench", kinds=frozenset({"embedding"}), create=HashingEmbedder, description="feature hashing")
    return make_registry(heta_plugin_vector, heta_plugin_local, heta_plugin_graph, heta_plugin_openai, inline_plugin("bench", model_providers=[hashing]))


def documents(articles):
    from heta_framework.kb import SourceDocument

    return [SourceDocument(text=a["text"], id=a["id"], name=f"{a['id']}.txt") for a in articles]


def models(server=None, embedding="bench/hashing"):
    from heta_framework.common.models import EmbeddingModel, LanguageModel
    from heta_framework.kb import KnowledgeModels

    language = None
    if server is not None:
        language = LanguageModel(
            model_name="openai/bench-model", base_url=server.base_url, api_key="sk-bench",
            options={"concurrency": 64, "timeout": 30, "max_attempts": 3, "retry_initial_delay": 0.05},
        )
    return KnowledgeModels(language=language, embedding=EmbeddingModel(model_name=embedding))


def base_steps():
    from heta_framework.builtin.steps import ParseDocuments, SplitDocuments

    return [ParseDocuments(), SplitDocuments()]


# --- the scripted OpenAI-compatible server ---------------------------------------------------


def scripted_answers(delay: float = 0.0):
    """A responder answering extraction, dedup and match prompts the way a cooperative model would."""
    from heta_framework.testing.http import Reply, chat_completion_body
    from heta_plugin_graph.extraction import nlp

    def prompt(request):
        users = [m["content"] for m in request.json["messages"] if m["role"] == "user"]
        return next((m for m in users if "<<<" in m or "Group " in m or "Item " in m), users[-1])

    def answer(request):
        schema = request.json["response_format"]["json_schema"]["schema"]
        kind = next(iter(schema["properties"]))
        text = prompt(request)
        if kind in ("entities", "relations"):
            chunk = text.split("<<<\n", 1)[1].rsplit("\n>>>", 1)[0]
            entities = nlp.extract_entities(chunk)
            if kind == "entities":
                body = {"entities": [{"name": e["name"], "type": e["type"], "description": e["description"][:160], "attributes": []} for e in entities]}
            else:
                listed = {line[2:] for line in text.split("\n") if line.startswith("- ")}
                relations = [r for r in nlp.extract_relations(chunk, [e for e in entities if e["name"] in listed])]
                body = {"relations": [{**r, "type": "related_to", "name": "related to"} for r in relations]}
        elif kind == "groups":
            groups = [block.split(":", 1)[0] for block in text.split("Group ")[1:]]
            body = {"groups": [{"group": g, "clusters": []} for g in groups]}  # keep everything apart
        else:
            items = [block.split(":", 1)[0] for block in text.split("Item ")[1:]]
            body = {"decisions": [{"item": i, "match": 0} for i in items]}
        reply = chat_completion_body(json.dumps(body), prompt_tokens=len(text) // 4, completion_tokens=len(json.dumps(body)) // 4)
        return Reply(body=reply, delay=delay) if delay else reply

    return answer


def fixed_answers(delay: float):
    """A constant, cheap answer for the throughput runs: the server must not spend the client's CPU."""
    from heta_framework.testing.http import Reply, chat_completion_body

    entities = chat_completion_body(json.dumps({"entities": [
        {"name": "Alpha", "type": "concept", "description": "Alpha.", "attributes": []},
        {"name": "Beta", "type": "concept", "description": "Beta.", "attributes": []},
    ]}), prompt_tokens=200, completion_tokens=40)
    relations = chat_completion_body(json.dumps({"relations": [
        {"source": "Alpha", "target": "Beta", "type": "related_to", "name": "related to", "description": "Alpha and Beta."}
    ]}), prompt_tokens=220, completion_tokens=30)
    return lambda request: Reply(body=entities if kind_of(request) == "entities" else relations, delay=delay)


def kind_of(request) -> str:
    return next(iter(request.json["response_format"]["json_schema"]["schema"]["properties"]))


def step_stats(report) -> dict:
    return {s.name: dict(s.stats) for s in report.steps}


# --- 1. LLM calls per chunk -------------------------------------------------------------------


async def llm_calls(articles, work: Path) -> dict:
    from heta_framework.kb import KnowledgeBase, Recipe
    from heta_framework.testing.http import ScriptedServer

    from heta_plugin_graph import HetaGraphProcedure

    reg = registry()
    with ScriptedServer(fallback=scripted_answers()) as server:
        recipe = Recipe(models=models(server), steps=[*base_steps(), HetaGraphProcedure(concurrency=8)])
        kb = KnowledgeBase.create(work / "llm", recipe, registry=reg)
        with Timer() as first:
            report = await kb.build(documents(articles))
        stats = step_stats(report)
        chunks = stats["split_documents"]["chunks"]
        extraction = [r for r in server.requests if kind_of(r) in ("entities", "relations")]
        first_build = {
            "documents": len(articles),
            "chunks": chunks,
            "extraction_calls": len(extraction),
            "extraction_calls_per_chunk": round(len(extraction) / chunks, 3),
            "entity_calls": stats["extract_entities"].get("llm_calls", 0),
            "relation_calls": stats["extract_relations"].get("llm_calls", 0),
            "dedup_calls": stats["deduplicate_entities"].get("llm_calls", 0),
            "prompt_tokens": sum(s.get("prompt_tokens", 0) for s in stats.values()),
            "completion_tokens": sum(s.get("completion_tokens", 0) for s in stats.values()),
            "issues": len(report.issues),
            "seconds": round(first.seconds, 2),
        }
        before = len(server.requests)
        with Timer() as again:
            rebuild = await kb.build(rebuild=True)
        rebuild_stats = step_stats(rebuild)
        rebuild_result = {
            "llm_calls": len(server.requests) - before,
            "cache_hits": sum(s.get("cache_hits", 0) for s in rebuild_stats.values()),
            "seconds": round(again.seconds, 2),
        }
        before = len(server.requests)
        doomed = [a["id"] for a in articles[:10]]
        with Timer() as deleting:
            await kb.delete_documents(doomed)
        deletion = {"documents": len(doomed), "llm_calls": len(server.requests) - before, "seconds": round(deleting.seconds, 3)}
        kb.close()

        # an interrupted build, resumed: only a call in flight at the interruption may be asked again
        server.reset()
        server.fallback = scripted_answers(delay=0.02)
        kb = KnowledgeBase.create(work / "resume", recipe, registry=reg)
        task = asyncio.create_task(kb.build(documents(articles)))
        while len([r for r in server.requests if kind_of(r) == "entities"]) < chunks // 2:
            await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        kb.close()
        asked_before = len(server.requests)
        kb = KnowledgeBase.load(work / "resume", registry=reg, models=models(server))
        resumed = await kb.build()
        asked = Counter((kind_of(r), json.dumps(r.json["messages"])) for r in server.requests)
        resume = {
            "calls_before_interruption": asked_before,
            "calls_after_resume": len(server.requests) - asked_before,
            "repeated_calls": sum(count - 1 for count in asked.values()),
            "in_flight_bound": 8,
            "cache_hits": sum(s.get("cache_hits", 0) for s in step_stats(resumed).values()),
        }
        kb.close()
    return {"first_build": first_build, "rebuild": rebuild_result, "resume": resume, "delete_documents": deletion}


# --- 2. throughput vs concurrency ---------------------------------------------------------------


async def throughput(articles, work: Path, levels, quick: bool) -> list[dict]:
    from heta_framework.kb import KnowledgeBase, Recipe
    from heta_framework.testing.http import ScriptedServer

    from heta_plugin_graph import ExtractEntities, ExtractRelations

    reg = registry()
    rows = []
    for level in levels:
        count = (16 if quick else 32) if level == 1 else (32 if quick else 64)
        with ScriptedServer(fallback=fixed_answers(delay=0.5)) as server:
            recipe = Recipe(models=models(server), steps=[*base_steps(), ExtractEntities(concurrency=level), ExtractRelations(concurrency=level)])
            kb = KnowledgeBase.create(work / f"c{level}", recipe, registry=reg)
            report = await kb.build(documents(articles[:count]))
            stats = step_stats(report)
            seconds = stats_seconds(report, ("extract_entities", "extract_relations"))
            chunks = stats["split_documents"]["chunks"]
            calls = len(server.requests)
            rows.append({
                "concurrency": level,
                "chunks": chunks,
                "llm_calls": calls,
                "seconds": round(seconds, 2),
                "chunks_per_s": round(chunks / seconds, 2),
                "calls_per_s": round(calls / seconds, 2),
                "server_max_in_flight": server.max_in_flight,
            })
            kb.close()
        print(f"  concurrency {level:>2}: {rows[-1]['chunks_per_s']:>6} chunks/s, max in flight {rows[-1]['server_max_in_flight']}", flush=True)
    return rows


def stats_seconds(report, names) -> float:
    return sum(s.seconds for s in report.steps if s.name in names)


# --- 3. the offline extractor at 10k chunks ------------------------------------------------------


async def offline(articles, work: Path, quick: bool) -> dict:
    from heta_framework.kb import KnowledgeBase, Recipe

    from heta_plugin_graph import HetaGraphProcedure

    reg = registry()
    recipe = Recipe(models=models(), steps=[*base_steps(), HetaGraphProcedure(extractor="nlp")])
    kb = KnowledgeBase.create(work / "nlp", recipe, registry=reg)
    with Timer() as total:
        report = await kb.build(documents(articles))
    stats = step_stats(report)
    seconds = {s.name: round(s.seconds, 2) for s in report.steps}
    chunks = stats["split_documents"]["chunks"]
    extraction_s = seconds["extract_entities"] + seconds["extract_relations"]
    graph_steps_s = sum(seconds[n] for n in ("extract_entities", "extract_relations", "deduplicate_entities", "deduplicate_relations", "build_graph"))
    build = stats["build_graph"]
    counts = kb.get_component("stores.graph").counts()
    embedded_texts = build.get("embedded_texts", 0)

    # the real embedding model's rate on the build's own texts (a sample), and what all of them would take
    graph = kb.get_component("stores.graph")
    from heta_plugin_graph.vectors import entity_text

    with graph._lock:
        rows = graph._db.execute("SELECT name, type, description FROM entities ORDER BY id LIMIT ?", (128 if quick else 512,)).fetchall()
    texts = [entity_text(*row) for row in rows]
    from heta_framework.common.models import EmbeddingModel
    from heta_plugin_local import create_client

    minilm = create_client(EmbeddingModel(model_name=MODEL))
    await minilm.embed(texts[:8])  # load the weights outside the timing
    with Timer() as embedding:
        await minilm.embed(texts)
    rate = len(texts) / embedding.seconds
    kb.close()
    return {
        "documents": len(articles),
        "chunks": chunks,
        "extraction_s": round(extraction_s, 2),
        "extraction_chunks_per_s": round(chunks / extraction_s, 1),
        "under_one_minute": extraction_s < 60,
        "graph_steps_s_with_hashing_embedder": round(graph_steps_s, 2),
        "step_seconds": seconds,
        "entities_found": stats["extract_entities"].get("entities_found", 0),
        "relations_found": stats["extract_relations"].get("relations_found", 0),
        "stored": counts,
        "embedding": {
            "texts_embedded_by_build": embedded_texts,
            "hashing_embedder_ms": build.get("embedding_ms", 0),
            "minilm_sample_texts": len(texts),
            "minilm_texts_per_s": round(rate, 1),
            "minilm_estimated_s_for_all_texts": round(embedded_texts / rate, 1),
        },
        "total_build_s_with_hashing_embedder": round(total.seconds, 2),
        "peak_rss_mb": peak_memory_mb(),
    }


def widen_listen_backlog() -> None:
    """The stdlib server accepts 5 pending connections; 32 concurrent clients would get refused and retry."""
    from http.server import ThreadingHTTPServer

    ThreadingHTTPServer.request_queue_size = 128


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--skip-offline", action="store_true", help="skip the nlp extractor at 10k (bench_modes.py measures it)")
    args = parser.parse_args()
    widen_listen_backlog()
    articles = load_articles()
    rng = random.Random(0)
    sample = rng.sample(articles, 40 if args.quick else 120)
    offline_articles = articles[: 2000 if args.quick else 10000]
    result: dict = {"machine": {"cpus": os.cpu_count()}, "quick": args.quick}
    with tempfile.TemporaryDirectory(prefix="heta-bench-graph-") as folder:
        work = Path(folder)
        print("1. LLM calls per chunk", flush=True)
        result["llm_calls"] = await llm_calls(sample, work)
        print(json.dumps(result["llm_calls"], indent=1), flush=True)
        print("2. extraction throughput vs concurrency (server answers after 500 ms)", flush=True)
        result["throughput_vs_concurrency"] = {"server_delay_s": 0.5, "rows": await throughput(sample, work, (1, 4, 16, 32), args.quick)}
        if not args.skip_offline:
            print("3. offline extractor", flush=True)
            result["offline_extractor"] = await offline(offline_articles, work, args.quick)
            print(json.dumps(result["offline_extractor"], indent=1), flush=True)
    path = write_result("graph", result)
    print(f"wrote {path}")


if __name__ == "__main__":
    asyncio.run(main())
