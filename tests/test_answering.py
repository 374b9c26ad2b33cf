"""options={"answer": True} on composed modes: one grounded answer for the outermost mode, citing its results."""

from __future__ import annotations

import json

import pytest
from heta_framework.common.models import LanguageModel
from heta_framework.kb import KnowledgeModels
from heta_framework.kb.search import QueryResult, SearchAssetRef
from heta_framework.testing.fakes import FixedResultsEngine, fake_knowledge_base
from heta_framework.testing.http import ScriptedServer, chat_completion_body

QUESTION = "what do whales eat"


def chunk(chunk_id: str, text: str) -> QueryResult:
    return QueryResult(id=chunk_id, text=text, score=0.0, metadata={"document_id": chunk_id.split("#")[0]})


KRILL = chunk("whale#3", "Baleen whales filter krill and small fish from the water through baleen plates.")
SQUID = chunk("whale#4", "Sperm whales dive deep to hunt giant squid.")
PLANKTON = chunk("plankton#0", "Krill are part of the zooplankton that many ocean animals feed on.")
FEEDS_ON = QueryResult(id="relation:Baleen whale|feeds on|Krill", text="Baleen whale feeds on Krill", score=0.0, kind="relation", evidence=(KRILL, PLANKTON))


def base_engines():
    return [
        FixedResultsEngine("vector_search", {QUESTION: [KRILL, SQUID]}, required_assets=[SearchAssetRef("chunk_vector_index")]),
        FixedResultsEngine(
            "heta_graph_search", {QUESTION: [FEEDS_ON]}, required_assets=[SearchAssetRef("graph_tables"), SearchAssetRef("graph_vector_index")]
        ),
        FixedResultsEngine("full_text_search", {QUESTION: [SQUID, PLANKTON]}, required_assets=[SearchAssetRef("chunk_full_text_index")]),
    ]


@pytest.fixture
async def kb(tmp_path, server):
    model = LanguageModel(model_name="openai/answerer", base_url=server.base_url, api_key="sk-test-answer-42", options={"max_attempts": 1})
    return await fake_knowledge_base(tmp_path / "kb", base_engines(), models=KnowledgeModels(language=model), plugins=["heta_plugin_openai"])


def answer_reply(server: ScriptedServer, answer: str, cited: list[int], sufficient: bool = True) -> None:
    body = json.dumps({"answer": answer, "sufficient": sufficient, "citations": cited})
    server.enqueue("chat/completions", body=chat_completion_body(body))


@pytest.mark.parametrize("mode", ["hybrid_search", "heta_rerank_search"])
async def test_composed_modes_answer_once_from_their_fused_results(kb, server, mode):
    plain = await kb.query(QUESTION, mode=mode, top_k=3)
    answer_reply(server, "Baleen whales eat krill [1]; sperm whales hunt squid [3].", [1])
    response = await kb.query(QUESTION, mode=mode, top_k=3, options={"answer": True}, trace=True)

    assert len(server.requests) == 1  # nested base calls never answer
    evidence = server.requests[0].json["messages"][1]["content"]
    for number, result in enumerate(plain.results, start=1):
        assert f"[{number}] {result.text}" in evidence  # the model sees the fused results, in order
    assert [r.id for r in response.results] == [r.id for r in plain.results]
    assert response.answer == "Baleen whales eat krill [1]; sperm whales hunt squid [3]."
    assert [(c.marker, c.result_id) for c in response.citations] == [
        ("[1]", response.results[0].id),
        ("[3]", response.results[2].id),
    ]
    assert response.metadata["answer_sufficient"] is True
    assert all("answer" not in child.options for child in response.trace.children)


async def test_rewrite_answers_after_fusing_its_variants(kb, server):
    server.enqueue("chat/completions", body=chat_completion_body(json.dumps({"queries": ["whale diet", "baleen feeding", "what whales hunt"]})))
    answer_reply(server, "Whales eat krill [1].", [1])
    response = await kb.query(QUESTION, mode="heta_rewrite_search", top_k=3, options={"answer": True})
    systems = [r.json["messages"][0]["content"] for r in server.requests]
    assert systems[0].startswith("You rewrite search queries") and systems[1].startswith("You answer questions")
    assert response.answer == "Whales eat krill [1]."
    assert response.citations[0].result_id == response.results[0].id


async def test_an_answer_without_a_language_model_is_an_issue(tmp_path):
    kb = await fake_knowledge_base(tmp_path / "kb", base_engines())
    response = await kb.query(QUESTION, mode="heta_rerank_search", top_k=3, options={"answer": True})
    assert response.answer is None
    assert [i["code"] for i in response.issues] == ["answer_unavailable"]
    assert len(response.results) == 3
