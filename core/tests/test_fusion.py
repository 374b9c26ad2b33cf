"""Weighted Reciprocal Rank Fusion by rank only, and the fusion key rule for graph facts and their evidence."""

from __future__ import annotations

import pytest
from heta_framework.builtin.engines.fusion import RankedList, merge_issues, reciprocal_rank_fusion
from heta_framework.kb.search import QueryResult


def chunk(chunk_id: str, text: str = "", score: float = 0.5, **metadata) -> QueryResult:
    return QueryResult(id=chunk_id, text=text or f"text of {chunk_id}", score=score, metadata={"document_id": chunk_id.split("#")[0], **metadata})


def fact(fact_id: str, *evidence: QueryResult, kind: str = "relation") -> QueryResult:
    return QueryResult(id=fact_id, text=fact_id.split(":", 1)[1], score=0.9, kind=kind, evidence=evidence)


PENICILLIN = chunk("penicillin#0", "Penicillin was discovered in 1928 by Alexander Fleming.")
FLEMING = chunk("alexander-fleming#2", "Fleming noticed mould killing Staphylococcus bacteria.")
ANTIBIOTIC = chunk("antibiotic#1", "Antibiotics are medicines that fight bacterial infections.")
VACCINE = chunk("vaccine#0", "A vaccine trains the immune system.")
PASTEUR = chunk("louis-pasteur#3", "Pasteur developed vaccines for rabies and anthrax.")


def scores(fused: list[QueryResult]) -> dict[str, float]:
    return {result.id: result.score for result in fused}


def test_score_is_the_weighted_sum_of_reciprocal_ranks_never_raw_scores():
    vector = [chunk("a", score=0.99), chunk("b", score=0.98), chunk("c", score=0.1)]
    full_text = [chunk("c", score=42.0), chunk("a", score=7.0)]
    fused = reciprocal_rank_fusion([RankedList("vector_search", vector), RankedList("full_text_search", full_text)])
    assert scores(fused) == pytest.approx({"a": 1 / 61 + 1 / 62, "c": 1 / 63 + 1 / 61, "b": 1 / 62})
    assert [r.id for r in fused] == ["a", "c", "b"]
    # raw scores play no part: multiplying one list's scores changes nothing
    louder = [chunk(r.id, score=r.score * 1000) for r in full_text]
    again = reciprocal_rank_fusion([RankedList("vector_search", vector), RankedList("full_text_search", louder)])
    assert scores(again) == pytest.approx(scores(fused))


def test_a_result_found_by_several_sources_ranks_higher_and_records_them_all():
    vector = [chunk("only-vector"), chunk("both")]
    full_text = [chunk("only-text"), chunk("both")]
    fused = reciprocal_rank_fusion([RankedList("vector_search", vector), RankedList("full_text_search", full_text)])
    assert fused[0].id == "both"
    assert fused[0].sources == ("vector_search", "full_text_search")
    assert fused[0].metadata["fusion_ranks"] == {"vector_search": 2, "full_text_search": 2}
    assert {r.id: r.sources for r in fused[1:]} == {"only-vector": ("vector_search",), "only-text": ("full_text_search",)}
    assert fused[0].metadata["document_id"] == "both"  # provenance kept


def test_sources_already_on_results_are_kept_so_nested_fusion_names_the_base_modes():
    hybrid = [attrs_sources(chunk("x"), ("vector_search", "heta_graph_search"))]
    full_text = [chunk("x")]
    fused = reciprocal_rank_fusion([RankedList("hybrid_search", hybrid), RankedList("full_text_search", full_text)])
    assert fused[0].sources == ("vector_search", "heta_graph_search", "full_text_search")
    assert fused[0].metadata["fusion_ranks"] == {"hybrid_search": 1, "full_text_search": 1}


def attrs_sources(result: QueryResult, sources: tuple[str, ...]) -> QueryResult:
    import attrs

    return attrs.evolve(result, sources=sources)


def test_weights_scale_each_list():
    vector = [chunk("v"), chunk("g")]
    graph = [chunk("g2"), chunk("v2")]
    even = reciprocal_rank_fusion([RankedList("vector_search", vector), RankedList("heta_graph_search", graph)])
    assert [r.id for r in even][:2] == ["v", "g2"]  # equal weights: list order breaks the tie
    graph_heavy = reciprocal_rank_fusion(
        [RankedList("vector_search", vector, 1.0), RankedList("heta_graph_search", graph, 1.2)]
    )
    assert [r.id for r in graph_heavy] == ["g2", "v2", "v", "g"]  # 1.2/62 > 1/61
    assert scores(graph_heavy)["g2"] == pytest.approx(1.2 / 61)
    muted = reciprocal_rank_fusion([RankedList("vector_search", vector, 0.0), RankedList("heta_graph_search", graph)])
    assert scores(muted)["v"] == 0.0


def test_rrf_k_decides_between_one_top_rank_and_agreement_lower_down():
    first = [chunk("top-of-one"), chunk("x1"), chunk("agreed")]
    second = [chunk("y1"), chunk("y2"), chunk("agreed")]
    lists = [RankedList("vector_search", first), RankedList("full_text_search", second)]
    smooth = reciprocal_rank_fusion(lists)  # k=60: 2/63 > 1/61
    assert smooth[0].id == "agreed"
    sharp = reciprocal_rank_fusion(lists, rrf_k=0)  # k=0: 1/1 > 2/3
    assert sharp[0].id in {"top-of-one", "y1"}
    assert scores(sharp)["agreed"] == pytest.approx(2 / 3)


def test_evidence_chunks_inherit_the_rank_of_the_graph_fact_they_support():
    vector = [ANTIBIOTIC, VACCINE, PENICILLIN]
    graph = [fact("relation:Alexander Fleming discovered penicillin", PENICILLIN, FLEMING)]
    fused = reciprocal_rank_fusion([RankedList("vector_search", vector), RankedList("heta_graph_search", graph)])
    by_id = {r.id: r for r in fused}
    # penicillin#0: vector rank 3 + evidence of the graph hit at rank 1 -> gains from both
    assert by_id["penicillin#0"].score == pytest.approx(1 / 63 + 1 / 61)
    assert by_id["penicillin#0"].sources == ("vector_search", "heta_graph_search")
    assert fused[0].id == "penicillin#0"
    # an evidence-only chunk becomes a chunk result of its own, at the fact's rank
    assert by_id["alexander-fleming#2"].kind == "chunk"
    assert by_id["alexander-fleming#2"].score == pytest.approx(1 / 61)
    assert by_id["alexander-fleming#2"].sources == ("heta_graph_search",)
    # the fact itself is still a result and keeps its evidence
    relation = by_id["relation:Alexander Fleming discovered penicillin"]
    assert relation.kind == "relation" and [e.id for e in relation.evidence] == ["penicillin#0", "alexander-fleming#2"]
    # the representative is the direct hit, not the copy inside the evidence
    assert by_id["penicillin#0"].metadata["fusion_ranks"] == {"vector_search": 3, "heta_graph_search": 1}


def test_a_list_counts_each_chunk_once_and_its_own_placement_wins():
    graph = [
        fact("entity:Penicillin", PENICILLIN, kind="entity"),
        fact("relation:Fleming worked at St Mary's", FLEMING),
        fact("relation:Penicillin treats infections", PENICILLIN, ANTIBIOTIC),
        chunk("antibiotic#1"),  # the list also returns this chunk directly, at rank 4
    ]
    fused = reciprocal_rank_fusion([RankedList("heta_graph_search", graph)])
    by_id = {r.id: r for r in fused}
    assert by_id["penicillin#0"].score == pytest.approx(1 / 61)  # best of ranks 1 and 3, counted once
    assert by_id["alexander-fleming#2"].score == pytest.approx(1 / 62)
    assert by_id["antibiotic#1"].score == pytest.approx(1 / 64)  # its own rank 4, not the fact's rank 3


def test_refusing_an_already_fused_list_does_not_lift_evidence_a_second_time():
    hybrid = reciprocal_rank_fusion(
        [
            RankedList("vector_search", [VACCINE, PASTEUR]),
            RankedList("heta_graph_search", [fact("relation:Pasteur made a rabies vaccine", PASTEUR)]),
        ]
    )
    positions = {r.id: i for i, r in enumerate(hybrid, start=1)}
    outer = reciprocal_rank_fusion([RankedList("hybrid_search", hybrid)])
    assert {r.id: r.metadata["fusion_ranks"]["hybrid_search"] for r in outer} == positions


def test_a_fused_list_counts_its_results_with_their_fused_scores_so_fusing_it_again_is_flat():
    a, b, c = chunk("a"), chunk("b"), chunk("c")
    vector, graph, full_text = [a, b], [b, c], [c, a]
    hybrid = reciprocal_rank_fusion([RankedList("vector_search", vector, 0.5), RankedList("heta_graph_search", graph)])
    outer = reciprocal_rank_fusion([RankedList("hybrid_search", hybrid, fused=True), RankedList("full_text_search", full_text, 0.5)])
    flat = reciprocal_rank_fusion(
        [RankedList("vector_search", vector, 0.5), RankedList("heta_graph_search", graph), RankedList("full_text_search", full_text, 0.5)]
    )
    # one sum over the three base lists, whatever the nesting
    assert scores(outer) == pytest.approx(scores(flat))
    assert [r.id for r in outer] == [r.id for r in flat] == ["b", "c", "a"]
    assert outer[0].metadata["fusion_ranks"] == {"hybrid_search": 1}  # the outer fusion still reports its own lists
    # by rank, the inner list's first place is worth 1/61 whatever its score: a ranking of rankings
    nested = reciprocal_rank_fusion([RankedList("hybrid_search", hybrid), RankedList("full_text_search", full_text, 0.5)])
    assert scores(nested)["b"] == pytest.approx(1 / 61)
    assert scores(outer)["b"] == pytest.approx(0.5 / 62 + 1 / 61)
    # a result that carries no fusion ranks counts by its rank even in a list marked fused
    assert scores(reciprocal_rank_fusion([RankedList("hybrid_search", [chunk("plain", score=9.0)], 2.0, fused=True)])) == {
        "plain": pytest.approx(2 / 61)
    }


def test_ties_keep_first_appearance_and_empty_input_is_empty():
    fused = reciprocal_rank_fusion([RankedList("a", [chunk("x")]), RankedList("b", [chunk("y")])])
    assert [r.id for r in fused] == ["x", "y"]
    assert reciprocal_rank_fusion([]) == []
    assert reciprocal_rank_fusion([RankedList("a", [])]) == []


def test_merge_issues_keeps_each_issue_once():
    issue = {"code": "rerank_failed", "message": "boom", "action": "used_rrf_order"}
    other = {"code": "round_no_results", "message": "none", "action": "stopped_rounds"}
    assert merge_issues([issue], [issue, other]) == [issue, other]
