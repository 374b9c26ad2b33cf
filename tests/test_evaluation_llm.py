"""Evaluation of modes that call a language model: calls per query counted, answers scored (scripted OpenAI server)."""

from __future__ import annotations

import json

from heta_framework.common.models import LanguageModel
from heta_framework.evaluation import EvalQuery, EvalSet, evaluate
from heta_framework.kb import KnowledgeModels
from heta_framework.kb.search import QueryResult, SearchAssetRef
from heta_framework.testing.fakes import FixedResultsEngine, fake_knowledge_base
from heta_framework.testing.http import chat_completion_body

QUESTION = "what do whales eat"
KRILL = QueryResult(id="whale#3", text="Baleen whales filter krill from the water.", score=2.0, metadata={"document_id": "whale"})
PLANKTON = QueryResult(id="plankton#0", text="Krill are part of the zooplankton.", score=1.0, metadata={"document_id": "plankton"})


def engines():
    return [
        FixedResultsEngine("vector_search", {QUESTION: [PLANKTON, KRILL]}, required_assets=[SearchAssetRef("chunk_vector_index")]),
        FixedResultsEngine("full_text_search", {QUESTION: [KRILL]}, required_assets=[SearchAssetRef("chunk_full_text_index")]),
        FixedResultsEngine("heta_graph_search", {QUESTION: []}, required_assets=[SearchAssetRef("graph_tables")]),
    ]


def answer(server, text: str) -> None:
    server.enqueue("chat/completions", body=chat_completion_body(json.dumps({"answer": text, "sufficient": True, "citations": [1]})))


async def test_llm_calls_per_query_and_answer_scores(tmp_path, server):
    model = LanguageModel(model_name="openai/answerer", base_url=server.base_url, api_key="sk-test-eval-7", options={"max_attempts": 1})
    kb = await fake_knowledge_base(tmp_path / "kb", engines(), models=KnowledgeModels(language=model), plugins=["heta_plugin_openai"])
    eval_set = EvalSet(name="whales", queries=[EvalQuery(id="q", text=QUESTION, relevance={"whale": 1}, answer="krill")])
    answer(server, "Whales eat krill [1].")  # hybrid_search: the answer only
    server.enqueue("chat/completions", body=chat_completion_body(json.dumps({"queries": ["whale diet", "baleen feeding"]})))
    answer(server, "Plankton [1].")  # heta_rewrite_search: the rewrite, then the answer
    result = await evaluate(eval_set, tmp_path / "out", knowledge_bases={"fake": kb}, modes=["hybrid_search", "heta_rewrite_search"],
                            answer=True, chart=False)
    kb.close()

    hybrid, rewrite = result.summaries
    assert len(server.requests) == 3
    assert (hybrid.mode, hybrid.llm_calls_per_query) == ("hybrid_search", 1.0)
    assert (rewrite.mode, rewrite.llm_calls_per_query) == ("heta_rewrite_search", 2.0)
    assert hybrid.metrics["answer_contains"] == 1.0 and hybrid.metrics["answer_exact_match"] == 0.0
    assert hybrid.metrics["answer_f1"] == 0.5  # "whales eat krill" against "krill": P = 1/3, R = 1
    assert rewrite.metrics["answer_contains"] == 0.0
    assert hybrid.metrics["recall@10"] == rewrite.metrics["recall@10"] == 1.0  # the gold document "whale" is in both
    assert "sk-test-eval-7" not in result.results_file.read_text() + result.summary_file.read_text()
