"""agent_search against heta_multihop_search on a MultiHop-RAG-format sample, and the wiki build's speed and model calls.

The data: a small set in MultiHop-RAG's format (``MultiHopRAG.json`` and ``corpus.json``, written to a temporary
folder and read back with ``heta eval``'s loader ``load_multihop_rag``): per question two articles, one saying which
company a company bought, the other where the bought company sits, plus distractor articles that share the names;
the gold evidence is the two facts, the gold answer the city. The full MultiHop-RAG set is not at hand here.

The model: a scripted OpenAI-compatible server (``ScriptedServer``) replaying fixed plans through the real openai
client, so both modes search the same words and the numbers compare the loops, not a model's judgement:

- ``heta_multihop_search``: round 1 searches the question; the extract step keeps results that hold a gold fact;
  the judge answers (the gold answer) when both facts are in, else asks for the second hop's query.
- ``agent_search``: turn 1 searches the question (``heta_rerank_search``, the multihop base mode), turn 2 searches
  the second hop and reads around the first hit, then it stops; the synthesis answers with the gold answer and cites
  the results that hold a gold fact.

Measured per mode: evidence recall@k (k = 5 by default) (the share of gold facts in the returned texts), answer metrics (exact match,
contains, token F1, from ``heta_framework.evaluation.metrics``), model calls and prompt size per query (characters
sent; tokens ~ characters / 4: the scripted server's token counts are fixed numbers), latency. Wiki: pages per
second of ``build_wiki_pages`` extractively, and model calls per document with the scripted model (first build,
then ``rebuild=True`` over the same documents).

Writes bench/results/agent.json. Run: ``python bench/bench_agent.py [--questions 12]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine_load, percentiles_ms, write_result  # noqa: E402
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments  # noqa: E402
from heta_framework.common.models import EmbeddingModel, LanguageModel  # noqa: E402
from heta_framework.evaluation import load_multihop_rag  # noqa: E402
from heta_framework.evaluation.metrics import answer_metrics, evidence_recall_at_k, mean  # noqa: E402
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe  # noqa: E402
from heta_framework.plugins.registry import PluginRegistry  # noqa: E402
from heta_framework.testing.http import RecordedRequest, Reply, ScriptedServer, chat_completion_body, chat_tool_calls_body  # noqa: E402
from heta_plugin_fulltext import IndexFullText  # noqa: E402
from heta_plugin_wiki.testing import is_page_request, page_reply, shown_results, wiki_steps  # noqa: E402

from heta_plugin_graph import HetaGraphProcedure  # noqa: E402
from heta_plugin_vector import EmbedChunks, IndexVectors  # noqa: E402

BUYERS = ["Norvane", "Quillet", "Brastow", "Kelmora", "Tavrin", "Oscalo", "Dunmere", "Velantis", "Harrowgate", "Pellucid",
          "Marlowe", "Stenbeck", "Corvane", "Ildrin", "Ashcombe", "Zentara"]
TARGETS = ["Fenwick Labs", "Orrin Systems", "Calder Bio", "Tessel Works", "Mirren Foods", "Gallant Freight", "Sorrel Media",
           "Brightwater Energy", "Halcyon Robotics", "Lumen Textiles", "Pike Analytics", "Rowan Pharma", "Ember Motors",
           "Quartz Finance", "Juniper Mining", "Alder Games"]
CITIES = ["Tampere", "Valparaiso", "Gdansk", "Porto Alegre", "Lyon", "Osaka", "Adelaide", "Leeds", "Bergen", "Cordoba",
          "Graz", "Halifax", "Kochi", "Malmo", "Trieste", "Windhoek"]
FILLER = ("Analysts expect the market to remain volatile this quarter. The company reported steady revenue and said it "
          "would keep investing in research. Several executives spoke at the annual conference.")


def write_sample(folder: Path, questions: int) -> Path:
    """MultiHopRAG.json and corpus.json for ``questions`` two-hop questions (plus one distractor article each)."""
    corpus, items = [], []
    for i in range(questions):
        buyer, target, city = BUYERS[i], TARGETS[i], CITIES[i]
        bought = f"{buyer} acquired {target} in {2011 + i}."
        sits = f"{target} is headquartered in {city}."
        corpus.append({"title": f"{buyer} expands", "body": f"{FILLER} {bought} {FILLER}", "source": "bench"})
        corpus.append({"title": f"Profile of {target}", "body": f"{FILLER} {sits} {FILLER}", "source": "bench"})
        # a distractor naming the same companies without either fact
        corpus.append({"title": f"{target} and {buyer} at the fair",
                       "body": f"{target} and {buyer} showed products at a trade fair in {CITIES[(i + 5) % len(CITIES)]}. {FILLER}",
                       "source": "bench"})
        items.append({"query": f"In which city is the company that {buyer} acquired headquartered?", "answer": city,
                      "question_type": "inference_query", "hop2": f"{target} headquarters city",
                      "evidence_list": [{"title": f"{buyer} expands", "fact": bought},
                                        {"title": f"Profile of {target}", "fact": sits}]})
    (folder / "MultiHopRAG.json").write_text(json.dumps(items, indent=1))
    (folder / "corpus.json").write_text(json.dumps(corpus, indent=1))
    return folder / "MultiHopRAG.json"


class Oracle:
    """What the scripted model knows of each question: its gold facts, its answer and its second hop."""

    def __init__(self, items: list[dict[str, Any]]):
        self.by_question = {item["query"]: item for item in items}

    def item(self, text: str) -> dict[str, Any]:
        return next(item for question, item in self.by_question.items() if question in text)

    def facts(self, text: str) -> list[str]:
        return [e["fact"] for e in self.item(text)["evidence_list"]]


def holds_fact(text: str, facts: list[str]) -> bool:
    flat = " ".join(text.split())
    return any(fact in flat for fact in facts)


def multihop_model(oracle: Oracle):
    def answer(request: RecordedRequest) -> Reply:
        body = request.json["messages"][-1]["content"]
        schema = request.json["response_format"]["json_schema"]["schema"]["properties"]
        item = oracle.item(body)
        facts = oracle.facts(body)
        if "useful" in schema:  # extract: the numbered new results holding a gold fact
            results = body.split("New results:\n", 1)[1]
            useful = [n for n, block in enumerate(results.split("\n[")[0:], start=1) if holds_fact(block, facts)]
            return Reply(body=chat_completion_body(json.dumps({"useful": useful, "information": "facts"})))
        if "sufficient" in schema:
            evidence = body.split("Evidence:\n", 1)[1]
            done = all(fact in " ".join(evidence.split()) for fact in facts)
            return Reply(body=chat_completion_body(json.dumps(
                {"sufficient": done, "answer": item["answer"] + " [1]" if done else "", "next_query": "" if done else item["hop2"]})))
        return Reply(body=chat_completion_body(json.dumps({"answer": item["answer"]})))
    return answer


def agent_model(oracle: Oracle):
    def answer(request: RecordedRequest) -> Reply:
        messages = request.json["messages"]
        if "tools" not in request.json:  # the synthesis
            body = messages[-1]["content"]
            facts = oracle.facts(body)
            blocks = re.split(r"\n\n(?=\[)", body.split("Evidence:\n", 1)[1])
            cited = [b[1:].split("] ", 1)[0] for b in blocks if b.startswith("[") and holds_fact(b, facts)]
            data = {"answer": oracle.item(body)["answer"], "insights": [{"text": "the two facts", "evidence": cited}]}
            return Reply(body=chat_completion_body(json.dumps(data)))
        question = messages[1]["content"]
        turn = sum(1 for m in messages if m["role"] == "assistant")
        if turn == 0:
            return Reply(body=chat_tool_calls_body([("search", {"query": question, "mode": "heta_rerank_search"})]))
        if turn == 1:
            calls: list[tuple[str, Any]] = [("search", {"query": oracle.item(question)["hop2"], "mode": "heta_rerank_search"})]
            first = next((r for r in shown_results(request) if r["kind"] == "chunk"), None)
            if first is not None:
                calls.append(("read_around", {"chunk_id": first["id"], "window": 1}))
            return Reply(body=chat_tool_calls_body(calls, id_prefix="call_1_"))
        return Reply(body=chat_completion_body("Found the buyer's target and its headquarters."))
    return answer


def recipe(server: ScriptedServer, *, language: bool = True) -> Recipe:
    models = KnowledgeModels(
        embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2"),
        language=LanguageModel(model_name="openai/bench-model", base_url=server.base_url, api_key="sk-bench",
                               options={"max_attempts": 1}) if language else None,
    )
    return Recipe(models=models, steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors(),
                                        IndexFullText(), HetaGraphProcedure(extractor="nlp"), *wiki_steps(use_language_model=False)])


def prompt_chars(requests: list[RecordedRequest]) -> int:
    return sum(len(json.dumps(r.json.get("messages", []))) for r in requests)


def run_mode(kb: KnowledgeBase, server: ScriptedServer, mode: str, responder, dataset: Any, top_k: int) -> dict[str, Any]:
    server.reset()
    server.respond("chat/completions", responder)
    rows = []
    for query in dataset.queries:
        before = len(server.requests)
        started = time.perf_counter()
        response = kb.sync.query(query.text, mode=mode, top_k=top_k)
        seconds = time.perf_counter() - started
        sent = server.requests[before:]
        texts = [r.text for r in response.results]
        rows.append({"recall": evidence_recall_at_k(texts, query.evidence, top_k), **answer_metrics(response.answer, query.answer),
                     "calls": len(sent), "prompt_chars": prompt_chars(sent), "seconds": seconds,
                     "issues": [i["code"] for i in response.issues]})
    return {
        "evidence_recall_at_k": round(mean(r["recall"] for r in rows) or 0.0, 4),
        **{name: round(mean(r[name] for r in rows) or 0.0, 4) for name in ("answer_exact_match", "answer_contains", "answer_f1")},
        "llm_calls_per_query": round(sum(r["calls"] for r in rows) / len(rows), 2),
        "prompt_chars_per_query": round(sum(r["prompt_chars"] for r in rows) / len(rows)),
        "approx_prompt_tokens_per_query": round(sum(r["prompt_chars"] for r in rows) / len(rows) / 4),
        "latency": percentiles_ms([r["seconds"] for r in rows]),
        "issue_codes": sorted({code for r in rows for code in r["issues"]}),
        "queries": len(rows),
    }


def wiki_build(registry: PluginRegistry, documents: list, folder: Path) -> dict[str, Any]:
    extractive = KnowledgeBase.create(folder / "extractive", recipe(ScriptedServer(), language=False), registry=registry)
    with extractive:
        report = extractive.sync.build(documents)
    step = next(s for s in report.steps if s.name == "build_wiki_pages")
    with ScriptedServer(fallback=lambda r: page_reply(r) if is_page_request(r) else None) as server:
        models = KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2"),
                                 language=LanguageModel(model_name="openai/bench-model", base_url=server.base_url, api_key="sk-bench"))
        model_recipe = Recipe(models=models, steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), *wiki_steps()[:2]])
        with KnowledgeBase.create(folder / "model", model_recipe, registry=registry) as kb:
            first = kb.sync.build(documents)
            calls_first = len([r for r in server.requests if is_page_request(r)])
            kb.sync.build(documents, rebuild=True)  # every document through every step again: the pages are skipped
            calls_repeat = len([r for r in server.requests if is_page_request(r)]) - calls_first
        model_step = next(s for s in first.steps if s.name == "build_wiki_pages")
    return {
        "documents": len(documents),
        "extractive_pages_per_second": round(step.stats.get("pages_written", 0) / max(step.seconds, 1e-9), 1),
        "extractive_step_seconds": round(step.seconds, 3),
        "model_llm_calls_per_document_first_build": round(calls_first / len(documents), 3),
        "model_llm_calls_rebuild_unchanged": calls_repeat,
        "model_step_seconds": round(model_step.seconds, 3),
    }


def main() -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--top-k", type=int, default=5)
    args = parser.parse_args()
    registry = PluginRegistry.from_entry_points()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        dataset_path = write_sample(folder, min(args.questions, len(BUYERS)))
        dataset = load_multihop_rag(dataset_path)
        items = json.loads(dataset_path.read_text())
        oracle = Oracle(items)
        with ScriptedServer() as server:
            with KnowledgeBase.create(folder / "kb", recipe(server), registry=registry) as kb:
                started = time.perf_counter()
                kb.sync.build(list(dataset.documents))
                build_seconds = time.perf_counter() - started
                modes = {
                    "heta_multihop_search": run_mode(kb, server, "heta_multihop_search", multihop_model(oracle), dataset, args.top_k),
                    "agent_search": run_mode(kb, server, "agent_search", agent_model(oracle), dataset, args.top_k),
                }
        wiki = wiki_build(registry, list(dataset.documents), folder / "wiki")
    result = {
        "data": {"format": "multihop-rag (synthetic sample, load_multihop_rag)", "questions": len(dataset.queries),
                 "documents": len(dataset.documents), "top_k": args.top_k, "build_seconds": round(build_seconds, 2)},
        "modes": modes,
        "wiki": wiki,
        "machine": machine_load(),
    }
    print(json.dumps(result, indent=2))
    write_result("agent", result)
    return result


if __name__ == "__main__":
    main()
