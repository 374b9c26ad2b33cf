"""heta_rewrite_search: variants from the real openai client against a scripted server, fused by RRF."""

from __future__ import annotations

import asyncio
import json

import pytest
from heta_framework.builtin.engines.mode_assets import RERANK_ASSETS
from heta_framework.builtin.engines.rewrite import RewriteSearchEngine
from heta_framework.common.models import LanguageModel
from heta_framework.kb import KnowledgeModels
from heta_framework.kb.search import QueryResult, SearchAssetRef
from heta_framework.testing.fakes import FixedResultsEngine, fake_knowledge_base
from heta_framework.testing.http import ScriptedServer, chat_completion_body, openai_error_body

VAGUE = "how does the thing handle sequences"
VARIANTS = [
    "recurrent neural network sequence processing",
    "transformer attention over token sequences",
    "LSTM memory for sequential data",
]


def chunk(chunk_id: str, text: str) -> QueryResult:
    return QueryResult(id=chunk_id, text=text, score=0.0, metadata={"document_id": chunk_id.split("#")[0]})


RNN = chunk("machine-learning#4", "Recurrent neural networks process sequences one element at a time, keeping a hidden state.")
TRANSFORMER = chunk("artificial-intelligence#7", "Transformers use attention to relate every token of a sequence to every other token.")
LSTM = chunk("machine-learning#5", "Long short-term memory (LSTM) units let recurrent networks remember over long sequences.")
TURING = chunk("alan-turing#1", "Turing machines read and write symbols on a tape, one cell at a time.")
COMPUTER = chunk("computer#2", "A computer executes a sequence of instructions called a program.")

VECTOR = {
    VAGUE: [COMPUTER, TURING],
    VARIANTS[0]: [RNN, LSTM],
    VARIANTS[1]: [TRANSFORMER, RNN],
    VARIANTS[2]: [LSTM, RNN],
}
FULL_TEXT = {VAGUE: [COMPUTER], VARIANTS[0]: [RNN], VARIANTS[2]: [LSTM]}


def base_engines(vector_engine=FixedResultsEngine):
    return [
        vector_engine("vector_search", VECTOR, required_assets=[SearchAssetRef("chunk_vector_index")]),
        FixedResultsEngine("heta_graph_search", {}, required_assets=[SearchAssetRef("graph_tables"), SearchAssetRef("graph_vector_index")]),
        FixedResultsEngine("full_text_search", FULL_TEXT, required_assets=[SearchAssetRef("chunk_full_text_index")]),
    ]


def language(server: ScriptedServer) -> KnowledgeModels:
    model = LanguageModel(
        model_name="openai/rewriter", base_url=server.base_url, api_key="sk-test-rewrite-0001", options={"max_attempts": 1, "timeout": 5}
    )
    return KnowledgeModels(language=model)


async def make_kb(tmp_path, server, engines=None, extra=()):
    return await fake_knowledge_base(
        tmp_path / "kb", [*(engines or base_engines()), *extra], models=language(server), plugins=["heta_plugin_openai"]
    )


def script_rewrite(server: ScriptedServer, text: str) -> None:
    server.enqueue("chat/completions", body=chat_completion_body(text))


def ids(response) -> list[str]:
    return [r.id for r in response.results]


async def test_variants_and_the_original_are_each_searched_and_fused(tmp_path, server):
    kb = await make_kb(tmp_path, server)
    script_rewrite(server, json.dumps({"queries": VARIANTS}))
    response = await kb.query(VAGUE, mode="heta_rewrite_search", top_k=4, trace=True)

    request = server.requests_to("chat/completions")[0].json
    assert request["model"] == "rewriter"
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["queries"]
    assert request["messages"][-1] == {"role": "user", "content": VAGUE}
    assert "3 different search queries" in request["messages"][0]["content"]

    assert response.metadata["queries"] == [VAGUE, *VARIANTS]
    # RNN is found by all three variants, LSTM by two: agreement wins over the vague query's hits
    assert ids(response)[:2] == ["machine-learning#4", "machine-learning#5"]
    assert set(ids(response)) == {"machine-learning#4", "machine-learning#5", "artificial-intelligence#7", "computer#2"}
    assert response.results[0].metadata["fusion_ranks"] == {"query:1": 1, "query:2": 2, "query:3": 2}
    assert not response.issues

    tree = response.trace.to_dict()
    assert tree["mode"] == "heta_rewrite_search"
    assert sorted(c["text"] for c in tree["children"]) == sorted([VAGUE, *VARIANTS])
    assert {c["mode"] for c in tree["children"]} == {"heta_rerank_search"}
    for child in tree["children"]:
        assert {g["mode"] for g in child["children"]} == {"hybrid_search", "full_text_search"}


async def test_base_searches_run_in_parallel(tmp_path, server):
    all_four_started = asyncio.Barrier(4)

    class MeetingEngine(FixedResultsEngine):
        async def query(self, request, context):
            await asyncio.wait_for(all_four_started.wait(), timeout=5)  # sequential searches would never all meet
            return await super().query(request, context)

    kb = await make_kb(tmp_path, server, base_engines(MeetingEngine))
    script_rewrite(server, json.dumps({"queries": VARIANTS}))
    response = await kb.query(VAGUE, mode="heta_rewrite_search", top_k=3)
    assert ids(response)[0] == "machine-learning#4"


async def test_only_three_variants_are_used_and_duplicates_of_the_query_are_dropped(tmp_path, server):
    kb = await make_kb(tmp_path, server)
    script_rewrite(server, json.dumps({"queries": [VAGUE.upper(), VARIANTS[0], "  ", VARIANTS[0], 7, VARIANTS[1], VARIANTS[2], "a fifth"]}))
    response = await kb.query(VAGUE, mode="heta_rewrite_search", top_k=3)
    assert response.metadata["queries"] == [VAGUE, *VARIANTS]


@pytest.mark.parametrize(
    ("reply", "code"),
    [
        ("Sure! Here are some queries: RNN, LSTM", "rewrite_invalid_output"),
        (json.dumps({"variants": VARIANTS}), "rewrite_invalid_output"),
        (json.dumps({"queries": "rnn lstm"}), "rewrite_invalid_output"),
        (json.dumps({"queries": []}), "rewrite_empty_output"),
        (json.dumps({"queries": ["", VAGUE]}), "rewrite_empty_output"),
    ],
)
async def test_unusable_output_falls_back_to_one_base_search(tmp_path, server, reply, code):
    kb = await make_kb(tmp_path, server)
    script_rewrite(server, reply)
    response = await kb.query(VAGUE, mode="heta_rewrite_search", top_k=3, trace=True)
    assert [issue["code"] for issue in response.issues] == [code]
    assert response.issues[0]["action"] == "used_base_search"
    assert response.issues[0]["message"]
    assert [c.mode for c in response.trace.children] == ["heta_rerank_search"]
    assert [c.text for c in response.trace.children] == [VAGUE]
    assert ids(response) == ["computer#2", "alan-turing#1"]
    assert response.trace.issues == tuple(response.issues)


async def test_a_failing_model_call_falls_back_to_one_base_search(tmp_path, server):
    kb = await make_kb(tmp_path, server)
    server.enqueue("chat/completions", status=400, body=openai_error_body("model overloaded"))
    response = await kb.query(VAGUE, mode="heta_rewrite_search", top_k=3)
    assert [issue["code"] for issue in response.issues] == ["rewrite_failed"]
    assert response.issues[0]["action"] == "used_base_search"
    assert "sk-test-rewrite-0001" not in json.dumps(response.issues)
    assert ids(response) == ["computer#2", "alan-turing#1"]


async def test_without_a_language_model_the_mode_is_unavailable_and_says_why(tmp_path):
    kb = await fake_knowledge_base(tmp_path / "kb", base_engines())
    assert "heta_rewrite_search" not in kb.available_queries
    assert kb.unavailable_queries()["heta_rewrite_search"] == ["component models.language is not in the recipe"]


def test_required_assets_and_components_follow_the_base_mode():
    engine = RewriteSearchEngine()
    assert engine.base_mode == "heta_rerank_search"
    assert engine.required_assets == RERANK_ASSETS
    assert {ref.key for ref in engine.required_components} == {"models.language"}
    hybrid = RewriteSearchEngine(base_mode="hybrid_search", mode="hybrid_rewrite_search")
    assert {ref.kind for ref in hybrid.required_assets} == {"chunk_vector_index", "graph_tables", "graph_vector_index"}
    with pytest.raises(ValueError, match="pass required_assets"):
        RewriteSearchEngine(base_mode="my_search", mode="my_rewrite_search")
    custom = RewriteSearchEngine(base_mode="my_search", mode="my_rewrite_search", required_assets=[SearchAssetRef("my_index")])
    assert custom.required_assets == frozenset({SearchAssetRef("my_index")})


async def test_a_custom_rewrite_engine_over_hybrid_search(tmp_path, server):
    custom = RewriteSearchEngine(base_mode="hybrid_search", mode="hybrid_rewrite_search", variant_count=2)
    kb = await make_kb(tmp_path, server, extra=[custom])
    script_rewrite(server, json.dumps({"queries": VARIANTS}))
    response = await kb.query(VAGUE, mode="hybrid_rewrite_search", top_k=3, trace=True)
    assert response.metadata["queries"] == [VAGUE, *VARIANTS[:2]]
    assert "2 different search queries" in server.requests[0].json["messages"][0]["content"]
    assert {c.mode for c in response.trace.children} == {"hybrid_search"}
    assert ids(response)[0] == "machine-learning#4"


async def test_fusion_options_reach_the_base_mode(tmp_path, server):
    engines = base_engines()
    kb = await make_kb(tmp_path, server, engines)
    script_rewrite(server, json.dumps({"queries": VARIANTS}))
    response = await kb.query(VAGUE, mode="heta_rewrite_search", top_k=2, options={"candidate_top_k": 4, "rrf_k": 1}, trace=True)
    assert response.metadata["fusion"] == {"rrf_k": 1.0, "candidate_top_k": 4}
    assert {c.top_k for c in response.trace.children} == {4}
    assert {dict(c.options)["rrf_k"] for c in response.trace.children} == {1}
    assert response.results[0].score == pytest.approx(1 / 2 + 1 / 3 + 1 / 3)  # RNN: ranks 1, 2, 2 with rrf_k=1
    script_rewrite(server, json.dumps({"queries": VARIANTS}))
    default = await kb.query(VAGUE, mode="heta_rewrite_search", top_k=2, trace=True)
    assert default.metadata["fusion"] == {"rrf_k": 60.0, "candidate_top_k": 6}  # min(top_k * 3, 50)
    assert {c.top_k for c in default.trace.children} == {6}
