"""heta_multihop_search: rounds, usefulness, sufficiency, conservative answers; real openai client, scripted server."""

from __future__ import annotations

import json

import pytest
from heta_framework.builtin.answering import INSUFFICIENT
from heta_framework.builtin.engines.mode_assets import RERANK_ASSETS
from heta_framework.builtin.engines.multihop import MultihopSearchEngine
from heta_framework.common.models import LanguageModel
from heta_framework.kb import KnowledgeModels
from heta_framework.kb.search import QueryResult, SearchAssetRef
from heta_framework.testing.fakes import FixedResultsEngine, fake_knowledge_base
from heta_framework.testing.http import ScriptedServer, chat_completion_body, openai_error_body

QUESTION = "In which year was the discoverer of penicillin born?"
HOP_2 = "Alexander Fleming year of birth"
HOP_3 = "Alexander Fleming biography Darvel Ayrshire"
NOTHING = "zzz no document mentions this"


def chunk(chunk_id: str, text: str) -> QueryResult:
    return QueryResult(id=chunk_id, text=text, score=0.0, metadata={"document_id": chunk_id.split("#")[0]})


DISCOVERY = chunk("penicillin#0", "Penicillin was discovered in 1928 by the Scottish scientist Alexander Fleming.")
ANTIBIOTIC = chunk("antibiotic#1", "Antibiotics are medicines that fight bacterial infections.")
BIRTH = chunk("alexander-fleming#0", "Sir Alexander Fleming (6 August 1881 - 11 March 1955) was a Scottish physician.")
DARVEL = chunk("alexander-fleming#1", "Fleming was born on Lochfield farm near Darvel, in Ayrshire, Scotland.")

VECTOR = {QUESTION: [DISCOVERY, ANTIBIOTIC], HOP_2: [BIRTH, DISCOVERY], HOP_3: [DARVEL, BIRTH]}
FULL_TEXT = {QUESTION: [DISCOVERY], HOP_2: [BIRTH]}

EXTRACT = "You help answer a question in several search rounds"
JUDGE = "Decide whether the numbered evidence answers"
FINAL = "The search rounds are over"


def base_engines():
    return [
        FixedResultsEngine("vector_search", VECTOR, required_assets=[SearchAssetRef("chunk_vector_index")]),
        FixedResultsEngine("heta_graph_search", {}, required_assets=[SearchAssetRef("graph_tables"), SearchAssetRef("graph_vector_index")]),
        FixedResultsEngine("full_text_search", FULL_TEXT, required_assets=[SearchAssetRef("chunk_full_text_index")]),
    ]


@pytest.fixture
async def kb(tmp_path, server):
    model = LanguageModel(
        model_name="openai/judge", base_url=server.base_url, api_key="sk-test-multihop-77", options={"max_attempts": 1, "timeout": 5}
    )
    return await fake_knowledge_base(
        tmp_path / "kb", base_engines(), models=KnowledgeModels(language=model), plugins=["heta_plugin_openai"]
    )


def reply(server: ScriptedServer, **data) -> None:
    server.enqueue("chat/completions", body=chat_completion_body(json.dumps(data)))


def reply_text(server: ScriptedServer, text: str) -> None:
    server.enqueue("chat/completions", body=chat_completion_body(text))


def steps_asked(server: ScriptedServer) -> list[str]:
    """Which prompt each model call used, in order."""
    names = {EXTRACT: "extract", JUDGE: "judge", FINAL: "final"}
    asked = []
    for request in server.requests_to("chat/completions"):
        system = request.json["messages"][0]["content"]
        asked.append(next(name for prefix, name in names.items() if system.startswith(prefix)))
    return asked


def user_prompt(server: ScriptedServer, index: int) -> str:
    return server.requests_to("chat/completions")[index].json["messages"][1]["content"]


def codes(response) -> list[str]:
    return [issue["code"] for issue in response.issues]


async def test_two_hops_answer_with_citations_and_round_reports(kb, server):
    reply(server, useful=[1], information="Alexander Fleming discovered penicillin in 1928.")
    reply(server, sufficient=False, answer="", next_query=HOP_2)
    reply(server, useful=[1], information="Fleming was born on 6 August 1881.")
    reply(server, sufficient=True, answer="Penicillin was discovered by Alexander Fleming [1], who was born in 1881 [2].", next_query="")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2, trace=True)

    assert steps_asked(server) == ["extract", "judge", "extract", "judge"]
    assert response.answer == "Penicillin was discovered by Alexander Fleming [1], who was born in 1881 [2]."
    assert [r.id for r in response.results] == ["penicillin#0", "alexander-fleming#0"]  # useful evidence, each once
    assert [(c.marker, c.result_id) for c in response.citations] == [("[1]", "penicillin#0"), ("[2]", "alexander-fleming#0")]
    assert response.metadata["round_reports"] == [
        {"round": 1, "query": QUESTION, "result_count": 2, "useful_information_found": True, "answered": False, "next_query": HOP_2},
        {"round": 2, "query": HOP_2, "result_count": 2, "useful_information_found": True, "answered": True, "next_query": None},
    ]
    assert not response.issues
    # the second extraction knows what the first found; the judge sees the evidence numbered as the citations are
    assert "Alexander Fleming discovered penicillin in 1928." in user_prompt(server, 2)
    assert "[2] Sir Alexander Fleming (6 August 1881" in user_prompt(server, 3)
    # one base search per round, each a child in the trace with its own nested calls
    assert [(c.mode, c.text) for c in response.trace.children] == [("heta_rerank_search", QUESTION), ("heta_rerank_search", HOP_2)]
    assert all({g.mode for g in c.children} == {"hybrid_search", "full_text_search"} for c in response.trace.children)
    # the extracted notes and any reasoning stay internal
    exposed = json.dumps({"metadata": dict(response.metadata), "trace": response.trace.to_dict()})
    assert "born on 6 August 1881" not in exposed and "in 1928." not in exposed


async def test_answered_in_the_first_round_stops_there(kb, server):
    reply(server, useful=[1, 2, 1, 9], information="Fleming discovered penicillin.")
    reply(server, sufficient=True, answer="Alexander Fleming [1].", next_query="")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2)
    assert steps_asked(server) == ["extract", "judge"]
    assert [r.id for r in response.results] == ["penicillin#0", "antibiotic#1"]  # out-of-range 9 and the repeat ignored
    assert [r["round"] for r in response.metadata["round_reports"]] == [1]
    assert response.metadata["round_reports"][0]["answered"] is True


async def test_max_rounds_defaults_to_three_then_a_conservative_answer(kb, server):
    for next_query in (HOP_2, HOP_3, "Fleming parents"):
        reply(server, useful=[1], information="something partial")
        reply(server, sufficient=False, answer="", next_query=next_query)
    reply(server, answer="Fleming discovered penicillin [1] and was likely born in 1881 [2]; the evidence is incomplete.")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2)
    assert steps_asked(server) == ["extract", "judge"] * 3 + ["final"]
    reports = response.metadata["round_reports"]
    assert [r["query"] for r in reports] == [QUESTION, HOP_2, HOP_3]
    assert reports[-1]["next_query"] == "Fleming parents" and not any(r["answered"] for r in reports)
    assert codes(response) == ["answer_not_confirmed"]
    assert response.issues[0]["action"] == "answered_conservatively"
    assert response.answer.endswith("the evidence is incomplete.")
    assert [r.id for r in response.results] == ["penicillin#0", "alexander-fleming#0", "alexander-fleming#1"]
    assert [c.result_id for c in response.citations] == ["penicillin#0", "alexander-fleming#0"]


async def test_max_rounds_option(kb, server):
    reply(server, useful=[1], information="Fleming discovered penicillin.")
    reply(server, sufficient=False, answer="", next_query=HOP_2)
    reply(server, answer="Alexander Fleming discovered penicillin [1]; his birth year is not in the evidence.")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2, options={"max_rounds": 1})
    assert steps_asked(server) == ["extract", "judge", "final"]
    assert len(response.metadata["round_reports"]) == 1
    assert codes(response) == ["answer_not_confirmed"]
    with pytest.raises(ValueError, match="max_rounds"):
        await kb.query(QUESTION, mode="heta_multihop_search", options={"max_rounds": 0})


async def test_a_round_without_results_spends_no_model_call(kb, server):
    response = await kb.query(NOTHING, mode="heta_multihop_search", top_k=2)
    assert server.requests == []
    assert response.answer == INSUFFICIENT
    assert response.results == () and response.citations == ()
    assert codes(response) == ["round_no_results", "answer_not_confirmed"]
    assert response.issues[0]["action"] == "stopped_rounds"
    assert response.metadata["round_reports"] == [
        {"round": 1, "query": NOTHING, "result_count": 0, "useful_information_found": False, "answered": False, "next_query": None}
    ]


async def test_a_later_empty_round_ends_the_rounds_with_a_conservative_answer(kb, server):
    reply(server, useful=[1], information="Fleming discovered penicillin.")
    reply(server, sufficient=False, answer="", next_query=NOTHING)
    reply(server, answer="Alexander Fleming discovered penicillin [1]; the evidence does not give his birth year.")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2)
    assert steps_asked(server) == ["extract", "judge", "final"]  # round 2 found nothing and asked nothing
    assert codes(response) == ["round_no_results", "answer_not_confirmed"]
    assert response.metadata["round_reports"][1]["result_count"] == 0


async def test_a_round_without_useful_information_is_reported_and_the_search_goes_on(kb, server):
    reply(server, useful=[], information="")
    reply(server, sufficient=False, answer="", next_query=HOP_2)
    reply(server, useful=[1], information="Fleming was born in 1881.")
    reply(server, sufficient=True, answer="The evidence gives 1881 [1].", next_query="")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2)
    assert codes(response) == ["round_no_useful_information"]
    assert response.issues[0]["details"] == {"round": 1}
    assert [r["useful_information_found"] for r in response.metadata["round_reports"]] == [False, True]
    assert [r.id for r in response.results] == ["alexander-fleming#0"]
    assert response.citations[0].result_id == "alexander-fleming#0"


async def test_a_repeated_next_query_stops_instead_of_searching_the_same_words(kb, server):
    reply(server, useful=[1], information="Fleming discovered penicillin.")
    reply(server, sufficient=False, answer="", next_query=f"  {QUESTION.upper()} ")
    reply(server, answer="Alexander Fleming discovered penicillin [1].")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2)
    assert steps_asked(server) == ["extract", "judge", "final"]
    assert response.metadata["round_reports"][0]["next_query"] is None


async def test_invalid_model_output_is_reported_per_step(kb, server):
    reply_text(server, "The first result mentions Fleming.")  # extract: not JSON
    reply(server, sufficient="maybe", answer="", next_query="")  # judge: wrong type -> stop
    reply(server, answer="")  # final: empty
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2)
    assert codes(response) == [
        "multihop_invalid_output",
        "round_no_useful_information",
        "multihop_invalid_output",
        "answer_not_confirmed",
    ]
    assert [i["details"]["step"] for i in response.issues if i["code"] == "multihop_invalid_output"] == ["extract", "judge"]
    assert response.answer == INSUFFICIENT
    assert response.metadata["round_reports"][0]["answered"] is False
    # with no useful evidence, the retrieved results are returned so the caller still sees what was found
    assert [r.id for r in response.results] == ["penicillin#0", "antibiotic#1"]
    assert response.citations == ()


async def test_invalid_final_answer_and_sufficient_without_answer(kb, server):
    reply(server, useful=[1], information="Fleming discovered penicillin.")
    reply(server, sufficient=True, answer="  ", next_query="")
    reply_text(server, "I cannot comply")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2)
    assert codes(response) == ["multihop_invalid_output", "multihop_invalid_output", "answer_not_confirmed"]
    assert [i["details"]["step"] for i in response.issues[:2]] == ["judge", "final"]
    assert response.answer == INSUFFICIENT
    assert [r.id for r in response.results] == ["penicillin#0"]


async def test_a_failing_model_call_is_an_issue_not_an_exception(kb, server):
    server.enqueue("chat/completions", status=400, body=openai_error_body("bad request"))
    reply(server, sufficient=False, answer="", next_query="")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2)
    assert codes(response)[:2] == ["multihop_model_failed", "round_no_useful_information"]
    assert response.issues[0]["action"] == "treated_round_as_not_useful"
    assert "sk-test-multihop-77" not in json.dumps(response.issues)
    assert response.answer == INSUFFICIENT


async def test_the_answer_option_does_not_answer_twice(kb, server):
    reply(server, useful=[1], information="Fleming discovered penicillin.")
    reply(server, sufficient=True, answer="Alexander Fleming [1].", next_query="")
    response = await kb.query(QUESTION, mode="heta_multihop_search", top_k=2, options={"answer": True})
    assert len(server.requests) == 2
    assert response.answer == "Alexander Fleming [1]."


async def test_without_a_language_model_the_mode_is_unavailable(tmp_path):
    kb = await fake_knowledge_base(tmp_path / "kb", base_engines())
    assert kb.unavailable_queries()["heta_multihop_search"] == ["component models.language is not in the recipe"]
    engine = MultihopSearchEngine()
    assert engine.base_mode == "heta_rerank_search" and engine.required_assets == RERANK_ASSETS
    assert {ref.key for ref in engine.required_components} == {"models.language"}
