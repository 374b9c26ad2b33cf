"""hybrid_search and heta_rerank_search over fixed base results: options, defaults, traces, issues, reranker."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest
from heta_framework.builtin.engines.mode_assets import HYBRID_ASSETS, RERANK_ASSETS
from heta_framework.errors import QueryRecursionError
from heta_framework.kb.search import QueryResponse, QueryResult, SearchAssetRef
from heta_framework.testing.fakes import FixedResultsEngine, fake_knowledge_base

QUESTION = "who discovered penicillin"


def chunk(chunk_id: str, text: str) -> QueryResult:
    document, _, index = chunk_id.partition("#")
    return QueryResult(id=chunk_id, text=text, score=0.0, metadata={"document_id": document, "name": f"{document}.md", "chunk_index": int(index)})


PENICILLIN = chunk("penicillin#0", "Penicillin was discovered in 1928 by the Scottish scientist Alexander Fleming.")
FLEMING = chunk("alexander-fleming#2", "Fleming noticed that a mould, Penicillium notatum, killed Staphylococcus bacteria.")
ANTIBIOTIC = chunk("antibiotic#1", "Antibiotics are medicines that fight bacterial infections; penicillin was the first.")
FLOREY = chunk("penicillin#3", "Howard Florey and Ernst Chain turned penicillin into a medicine in the 1940s.")
PASTEUR = chunk("louis-pasteur#0", "Louis Pasteur discovered the principles of vaccination and pasteurization.")
VACCINE = chunk("vaccine#0", "A vaccine is a biological preparation that provides active acquired immunity.")
DISCOVERED_BY = QueryResult(
    id="relation:Alexander Fleming|discovered|Penicillin",
    text="Alexander Fleming discovered Penicillin",
    score=0.0,
    kind="relation",
    evidence=(PENICILLIN, FLEMING),
)
FLEMING_ENTITY = QueryResult(
    id="entity:Alexander Fleming", text="Alexander Fleming: Scottish physician and microbiologist", score=0.0, kind="entity", evidence=(FLEMING,)
)

VECTOR_HITS = [ANTIBIOTIC, PENICILLIN, PASTEUR, VACCINE]
GRAPH_HITS = [DISCOVERED_BY, FLEMING_ENTITY]
FULL_TEXT_HITS = [FLOREY, PENICILLIN, ANTIBIOTIC]


def base_engines(**issues: list[dict[str, Any]]) -> dict[str, FixedResultsEngine]:
    def engine(mode: str, hits: list[QueryResult], *assets: str) -> FixedResultsEngine:
        return FixedResultsEngine(
            mode, {QUESTION: hits}, required_assets=[SearchAssetRef(kind) for kind in assets], issues=issues.get(mode, ())
        )

    return {
        "vector_search": engine("vector_search", VECTOR_HITS, "chunk_vector_index"),
        "heta_graph_search": engine("heta_graph_search", GRAPH_HITS, "graph_tables", "graph_vector_index"),
        "full_text_search": engine("full_text_search", FULL_TEXT_HITS, "chunk_full_text_index"),
    }


@pytest.fixture
def engines() -> dict[str, FixedResultsEngine]:
    return base_engines()


@pytest.fixture
async def kb(tmp_path, engines):
    return await fake_knowledge_base(tmp_path / "kb", engines.values())


def ids(response: QueryResponse) -> list[str]:
    return [result.id for result in response.results]


# --- hybrid_search --------------------------------------------------------------------


async def test_hybrid_fuses_vector_and_graph_by_rank_with_evidence_gaining_from_both(kb):
    response = await kb.query(QUESTION, mode="hybrid_search", top_k=5)
    by_id = {r.id: r for r in response.results}
    # penicillin#0: vector rank 2 + evidence of the rank-1 relation; fleming#2: evidence of ranks 1 and 2 -> best is 1
    assert by_id["penicillin#0"].score == pytest.approx(1 / 62 + 1 / 61)
    assert ids(response)[0] == "penicillin#0"
    assert by_id["penicillin#0"].sources == ("vector_search", "heta_graph_search")
    assert by_id["alexander-fleming#2"].score == pytest.approx(1 / 61)
    assert by_id["alexander-fleming#2"].sources == ("heta_graph_search",)
    assert len(response.results) == 5
    assert response.metadata["fusion"] == {
        "rrf_k": 60.0,
        "candidate_top_k": 15,
        "weights": {"vector_search": 1.0, "heta_graph_search": 1.0},
        "weights_origin": "default",  # too few documents to calibrate on (calibration has its own tests)
    }


async def test_candidate_top_k_defaults_to_three_times_top_k_capped_at_50(kb, engines):
    await kb.query(QUESTION, mode="hybrid_search", top_k=4)
    await kb.query(QUESTION, mode="hybrid_search", top_k=20)
    await kb.query(QUESTION, mode="hybrid_search", top_k=4, options={"candidate_top_k": 7})
    for mode in ("vector_search", "heta_graph_search"):
        assert [call.top_k for call in engines[mode].calls] == [12, 50, 7]
    with pytest.raises(ValueError, match="candidate_top_k"):
        await kb.query(QUESTION, mode="hybrid_search", options={"candidate_top_k": 0})


async def test_rrf_k_option_changes_the_smoothing(kb):
    sharp = await kb.query(QUESTION, mode="hybrid_search", top_k=3, options={"rrf_k": 0})
    by_id = {r.id: r for r in sharp.results}
    assert by_id["penicillin#0"].score == pytest.approx(1 / 2 + 1 / 1)
    assert sharp.metadata["fusion"]["rrf_k"] == 0.0
    with pytest.raises(ValueError, match="rrf_k"):
        await kb.query(QUESTION, mode="hybrid_search", options={"rrf_k": "sixty"})


async def test_hybrid_weights_prefer_a_source_and_zero_skips_it(kb, engines):
    default = await kb.query(QUESTION, mode="hybrid_search", top_k=3)
    assert ids(default)[1:3] == ["antibiotic#1", "relation:Alexander Fleming|discovered|Penicillin"]  # tie -> vector first
    graph_heavy = await kb.query(
        QUESTION, mode="hybrid_search", top_k=3, options={"hybrid_weights": {"vector_search": 1.0, "heta_graph_search": 1.2}}
    )
    # graph facts (1.2/61) now beat the top vector-only chunk (1/61)
    assert ids(graph_heavy) == ["penicillin#0", "relation:Alexander Fleming|discovered|Penicillin", "alexander-fleming#2"]
    assert {r.id: r.score for r in graph_heavy.results}["penicillin#0"] == pytest.approx(1 / 62 + 1.2 / 61)
    calls_before = len(engines["heta_graph_search"].calls)
    vector_only = await kb.query(QUESTION, mode="hybrid_search", top_k=4, options={"hybrid_weights": {"heta_graph_search": 0}})
    assert ids(vector_only) == [r.id for r in VECTOR_HITS]
    assert len(engines["heta_graph_search"].calls) == calls_before  # a zero weight does not run the search
    with pytest.raises(ValueError, match="unknown mode.*full_text_search"):
        await kb.query(QUESTION, mode="hybrid_search", options={"hybrid_weights": {"full_text_search": 1.0}})
    with pytest.raises(ValueError, match="hybrid_weights"):
        await kb.query(QUESTION, mode="hybrid_search", options={"hybrid_weights": {"vector_search": -1}})


async def test_hybrid_runs_its_base_searches_concurrently(tmp_path):
    both_started = asyncio.Barrier(2)

    class MeetingEngine(FixedResultsEngine):
        async def query(self, request, context):
            # each search waits until the other one has started too: sequential calls would never meet
            await asyncio.wait_for(both_started.wait(), timeout=5)
            return await super().query(request, context)

    engines = base_engines()
    engines["vector_search"] = MeetingEngine("vector_search", {QUESTION: VECTOR_HITS}, required_assets=[SearchAssetRef("chunk_vector_index")])
    engines["heta_graph_search"] = MeetingEngine(
        "heta_graph_search", {QUESTION: GRAPH_HITS}, required_assets=[SearchAssetRef("graph_tables"), SearchAssetRef("graph_vector_index")]
    )
    kb = await fake_knowledge_base(tmp_path / "kb", engines.values())
    response = await kb.query(QUESTION, mode="hybrid_search", top_k=3)
    assert ids(response)[0] == "penicillin#0"


async def test_base_issues_surface_in_the_composed_response(tmp_path):
    issue = {"code": "graph_index_stale", "message": "graph vectors are older than the tables", "action": "searched_anyway"}
    kb = await fake_knowledge_base(tmp_path / "kb", base_engines(heta_graph_search=[issue]).values())
    hybrid = await kb.query(QUESTION, mode="hybrid_search", top_k=3)
    assert hybrid.issues == [issue]
    rerank = await kb.query(QUESTION, mode="heta_rerank_search", top_k=3)
    assert rerank.issues == [issue]


async def test_required_assets_and_availability(tmp_path, engines):
    assert {ref.kind for ref in HYBRID_ASSETS} == {"chunk_vector_index", "graph_tables", "graph_vector_index"}
    assert {ref.kind for ref in RERANK_ASSETS} == {"chunk_vector_index", "chunk_full_text_index", "graph_tables", "graph_vector_index"}
    no_full_text = await fake_knowledge_base(
        tmp_path / "kb", engines.values(), kinds=("chunk_vector_index", "graph_tables", "graph_vector_index")
    )
    assert "hybrid_search" in no_full_text.available_queries
    assert no_full_text.unavailable_queries()["heta_rerank_search"] == ["asset chunk_full_text_index is not built"]


# --- fusion_search: vector + full text, no graph ----------------------------------------


async def test_fusion_search_fuses_vector_and_full_text_by_rank(kb, engines):
    response = await kb.query(QUESTION, mode="fusion_search", top_k=4)
    by_id = {r.id: r for r in response.results}
    # penicillin#0: vector rank 2 and full-text rank 2; antibiotic#1: vector 1 and full text 3
    assert by_id["penicillin#0"].score == pytest.approx(1 / 62 + 1 / 62)
    assert by_id["antibiotic#1"].score == pytest.approx(1 / 61 + 1 / 63)
    assert ids(response) == ["antibiotic#1", "penicillin#0", "penicillin#3", "louis-pasteur#0"]
    assert not engines["heta_graph_search"].calls  # the graph is never asked
    assert response.metadata["fusion"]["weights"] == {"vector_search": 1.0, "full_text_search": 1.0}


async def test_fusion_weights_prefer_a_source_zero_skips_it_and_bad_keys_are_named(kb, engines):
    text_only = await kb.query(QUESTION, mode="fusion_search", top_k=3, options={"fusion_weights": {"vector_search": 0}})
    assert ids(text_only) == [r.id for r in FULL_TEXT_HITS]
    assert not engines["vector_search"].calls
    assert text_only.metadata["fusion"]["weights_origin"] == "explicit"
    with pytest.raises(ValueError, match="fusion_weights has unknown mode.*heta_graph_search"):
        await kb.query(QUESTION, mode="fusion_search", options={"fusion_weights": {"heta_graph_search": 1.0}})
    with pytest.raises(ValueError, match="hybrid_weights"):  # hybrid_search's option is not this mode's
        await kb.query(QUESTION, mode="fusion_search", options={"hybrid_weights": {"vector_search": 1.0}})


async def test_without_a_graph_fusion_search_is_available_and_the_default_mode(tmp_path, engines):
    minimal = await fake_knowledge_base(tmp_path / "kb", engines.values(), kinds=("chunk_vector_index", "chunk_full_text_index"))
    assert "fusion_search" in minimal.available_queries
    assert "hybrid_search" not in minimal.available_queries
    response = await minimal.query(QUESTION, top_k=2)
    assert response.metadata["fusion"]["weights"] == {"vector_search": 1.0, "full_text_search": 1.0}
    no_full_text = await fake_knowledge_base(tmp_path / "kb2", engines.values(), kinds=("chunk_vector_index",))
    assert no_full_text.unavailable_queries()["fusion_search"] == ["asset chunk_full_text_index is not built"]


# --- heta_rerank_search ---------------------------------------------------------------


async def test_rerank_without_reranker_is_available_and_keeps_the_rrf_order(kb):
    assert "heta_rerank_search" in kb.available_queries  # the reranker is not a required component
    response = await kb.query(QUESTION, mode="heta_rerank_search", top_k=4)
    assert response.metadata["ranking"] == "rrf"
    assert response.metadata["fusion"] == {
        "rrf_k": 60.0,
        "candidate_top_k": 12,
        "weights": {"hybrid_search": 1.0, "full_text_search": 1.0},
        "weights_origin": "default",
    }
    by_id = {r.id: r for r in response.results}
    hybrid = {r.id: r for r in (await kb.query(QUESTION, mode="hybrid_search", top_k=12)).results}
    # penicillin#0 is first in hybrid_search and second in full_text_search; the fusion is flat: hybrid_search's
    # result counts with its own fused score (vector and graph ranks), not as a rank-1 hit (1 / 61)
    assert ids(response)[0] == "penicillin#0"
    assert hybrid["penicillin#0"].score > 1 / 61
    assert by_id["penicillin#0"].score == pytest.approx(hybrid["penicillin#0"].score + 1 / 62)
    assert by_id["penicillin#0"].metadata["fusion_ranks"] == {"hybrid_search": 1, "full_text_search": 2}
    assert by_id["penicillin#0"].sources == ("vector_search", "heta_graph_search", "full_text_search")
    assert not response.issues
    # a chunk found by full text alone still enters the fused list, below those two legs agree on
    found_by_full_text = {r.id: r for r in (await kb.query(QUESTION, mode="heta_rerank_search", top_k=12)).results}
    assert found_by_full_text["penicillin#3"].sources == ("full_text_search",)


async def test_rerank_options_reach_the_base_modes(kb, engines):
    await kb.query(QUESTION, mode="heta_rerank_search", top_k=5)
    assert engines["full_text_search"].calls[-1].top_k == 15
    response = await kb.query(
        QUESTION,
        mode="heta_rerank_search",
        top_k=2,
        options={"candidate_top_k": 3, "rrf_k": 10, "hybrid_weights": {"vector_search": 2.0}},
        trace=True,
    )
    assert engines["full_text_search"].calls[-1].top_k == 3
    assert engines["vector_search"].calls[-1].top_k == 3
    assert response.metadata["fusion"] == {
        "rrf_k": 10.0,
        "candidate_top_k": 3,
        "weights": {"hybrid_search": 1.0, "full_text_search": 1.0},
        "weights_origin": "explicit",  # hybrid_weights given: no calibration, the two lists weigh the same
    }
    hybrid_node = next(c for c in response.trace.children if c.mode == "hybrid_search")
    assert dict(hybrid_node.options) == {"candidate_top_k": 3, "rrf_k": 10, "hybrid_weights": {"vector_search": 2.0}}
    assert len(response.results) == 2


async def test_trace_shows_each_nested_base_call_as_children(kb):
    response = await kb.query(QUESTION, mode="heta_rerank_search", top_k=3, trace=True)
    tree = response.trace.to_dict()
    assert tree["mode"] == "heta_rerank_search" and tree["result_count"] == 3
    children = {child["mode"]: child for child in tree["children"]}
    assert set(children) == {"hybrid_search", "full_text_search"}
    assert {c["mode"] for c in children["hybrid_search"]["children"]} == {"vector_search", "heta_graph_search"}
    assert children["full_text_search"]["children"] == []
    assert children["full_text_search"]["result_count"] == 3
    assert all(c["top_k"] == 9 for c in tree["children"])
    assert all(c["duration_ms"] <= tree["duration_ms"] for c in tree["children"])
    assert (await kb.query(QUESTION, mode="heta_rerank_search")).trace is None


async def test_recursion_through_a_custom_engine_is_refused_with_the_chain(tmp_path):
    @attrs.frozen
    class LoopingFullText:
        """A broken plugin's full_text_search that calls the composed mode that calls it."""

        mode: str = "full_text_search"
        required_assets: frozenset = frozenset({SearchAssetRef("chunk_full_text_index")})

        async def query(self, request, context):
            return await context.query(request.text, mode="heta_rerank_search")

    engines = base_engines()
    engines["full_text_search"] = LoopingFullText()
    kb = await fake_knowledge_base(tmp_path / "kb", engines.values())
    with pytest.raises(QueryRecursionError) as error:
        await kb.query(QUESTION, mode="heta_rerank_search")
    assert "heta_rerank_search -> full_text_search -> heta_rerank_search" in str(error.value)
    assert "must only call modes that do not call it back" in str(error.value)


# --- with a reranker: the real cohere client against a scripted server ----------------


@pytest.fixture
async def reranked_kb(tmp_path):
    from heta_framework.common.models import RerankModel
    from heta_framework.kb import KnowledgeModels
    from heta_framework.testing.http import ScriptedServer

    with ScriptedServer() as server:
        reranker = RerankModel(
            model_name="cohere/rerank-english-v3.0",
            base_url=server.url,
            api_key="co-test-RERANK-9a1b",
            options={"max_attempts": 1, "timeout": 5},
        )
        kb = await fake_knowledge_base(
            tmp_path / "kb", base_engines().values(), models=KnowledgeModels(reranker=reranker), plugins=["heta_plugin_rerank"]
        )
        yield kb, server


async def test_reranker_orders_the_fused_candidates(reranked_kb):
    from heta_framework.testing.http import rerank_body

    kb, server = reranked_kb
    fused = await kb.query(QUESTION, mode="heta_rerank_search", top_k=50, options={"candidate_top_k": 9})
    server.reset()
    server.enqueue("/v2/rerank", body=rerank_body([(3, 0.97), (0, 0.61)]))
    response = await kb.query(QUESTION, mode="heta_rerank_search", top_k=2, options={"candidate_top_k": 9})

    request = server.requests_to("/v2/rerank")[0].json
    assert request["query"] == QUESTION
    assert request["model"] == "rerank-english-v3.0"
    assert request["top_n"] == 2  # top_n = top_k
    assert request["documents"] == [r.text for r in fused.results]  # every fused candidate, in RRF order
    assert response.metadata["ranking"] == "reranker"
    assert ids(response) == [fused.results[3].id, fused.results[0].id]
    assert [r.score for r in response.results] == [0.97, 0.61]
    assert response.results[0].metadata["rrf_score"] == pytest.approx(fused.results[3].score)
    assert not response.issues


async def test_a_failing_reranker_degrades_to_the_rrf_order(reranked_kb):
    from heta_framework.testing.http import openai_error_body

    kb, server = reranked_kb
    server.enqueue("/v2/rerank", status=400, body=openai_error_body("invalid model"))
    response = await kb.query(QUESTION, mode="heta_rerank_search", top_k=3, trace=True)
    assert len(server.requests_to("/v2/rerank")) == 1
    assert response.metadata["ranking"] == "rrf"
    assert ids(response)[0] == "penicillin#0"
    hybrid = (await kb.query(QUESTION, mode="hybrid_search", top_k=9)).results
    assert response.results[0].score == pytest.approx(hybrid[0].score + 1 / 62)  # the flat RRF score
    assert [i["code"] for i in response.issues] == ["rerank_failed"]
    assert response.issues[0]["action"] == "used_rrf_order"
    assert "co-test-RERANK-9a1b" not in response.issues[0]["message"]
    assert response.trace.issues == tuple(response.issues)


async def test_a_reranker_answer_with_bad_indices_degrades_too(reranked_kb):
    from heta_framework.testing.http import rerank_body

    kb, server = reranked_kb
    server.enqueue("/v2/rerank", body=rerank_body([(99, 0.9)]))
    response = await kb.query(QUESTION, mode="heta_rerank_search", top_k=3)
    assert [i["code"] for i in response.issues] == ["rerank_failed"]
    assert ids(response)[0] == "penicillin#0"
