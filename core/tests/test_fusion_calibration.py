"""Choosing fusion weights from pseudo-queries: the selection rule and the pseudo-queries themselves."""

from __future__ import annotations

import random

from heta_framework.builtin.engines.calibration import (
    BOUNDED_RATIOS,
    MILD_RATIOS,
    RATIOS,
    PseudoQuery,
    choose_weights,
    main_language,
    pseudo_query_text,
    ratio_range,
    reciprocal_rank,
)
from heta_framework.kb.search import QueryResult


def hit(document_id: str) -> QueryResult:
    return QueryResult(id=f"{document_id}#0", text="", score=1.0, kind="chunk", metadata={"document_id": document_id})


def test_a_leg_that_finds_nothing_right_loses_its_weight():
    queries = [PseudoQuery(text=f"q{i}", document_id=f"d{i}") for i in range(20)]
    answers = []
    for i in range(20):
        # the strong leg has the answer first or second; the weak one has it at rank 9 or not at all
        strong = [hit(f"d{i}"), hit("noise")] if i % 2 else [hit("noise"), hit(f"d{i}")]
        weak = [hit(f"w{i}-{j}") for j in range(8)] + ([hit(f"d{i}")] if i % 3 == 0 else [])
        answers.append({"weak_leg": weak, "strong_leg": strong})
    calibration = choose_weights(("weak_leg", "strong_leg"), answers, queries)
    assert calibration.weights["strong_leg"] == 1.0
    assert calibration.weights["weak_leg"] <= 0.5  # the mildest down-weighting that fixes the order
    assert calibration.leg_mrr["strong_leg"] == 0.75
    # plain RRF lets the weak leg's confident noise push answers down; the chosen weights do not
    assert calibration.fused_mrr >= calibration.leg_mrr["strong_leg"] > calibration.equal_weights_mrr


def test_legs_of_equal_worth_keep_equal_weights():
    queries = [PseudoQuery(text=f"q{i}", document_id=f"d{i}") for i in range(10)]
    answers = [{"a": [hit(f"d{i}")], "b": [hit(f"d{i}")]} for i in range(10)]
    calibration = choose_weights(("a", "b"), answers, queries)
    assert calibration.weights == {"a": 1.0, "b": 1.0}  # every ratio ties: the spec's equal weights win ties


def test_reciprocal_rank_counts_documents_once_and_reads_graph_evidence():
    fact = QueryResult(id="relation:x", text="", score=1.0, kind="relation", evidence=(hit("d2"),))
    results = [hit("d1"), hit("d1"), fact, hit("d3")]
    assert reciprocal_rank(results, "d2") == 0.5  # d1 twice is one document; the fact stands for its evidence
    assert reciprocal_rank(results, "d9") == 0.0


def test_pseudo_queries_are_words_of_the_chunk_or_a_span_of_its_characters():
    text = "Penicillin was discovered by Alexander Fleming in 1928 while he studied Staphylococcus bacteria."
    query = pseudo_query_text(text, random.Random(0))
    assert query == pseudo_query_text(text, random.Random(0))  # a fixed seed gives the same calibration
    chosen = query.split()
    assert 3 <= len(chosen) <= 6 and all(len(w) >= 4 and w in text.lower() for w in chosen)
    chinese = "长江发源于青藏高原的唐古拉山脉，全长约六千三百公里，是亚洲第一长河。"
    span = pseudo_query_text(chinese, random.Random(0))
    assert len(span) == 10 and span in chinese
    assert pseudo_query_text("a an of it", random.Random(0)) is None


def lexical_wins_every_pseudo_query() -> tuple[list[PseudoQuery], list[dict[str, list[QueryResult]]]]:
    queries = [PseudoQuery(text=f"q{i}", document_id=f"d{i}", language="french") for i in range(20)]
    # the keyword leg has every answer first and a wrong document second, which the dense leg puts first:
    # only leaving the dense leg out keeps the answer on top
    answers = [{"hybrid_search": [hit(f"n{i}")], "full_text_search": [hit(f"d{i}"), hit(f"n{i}")]} for i in range(20)]
    return queries, answers


def test_a_dense_leg_is_only_tilted_against_a_keyword_leg_while_its_model_knows_the_language():
    legs = ("hybrid_search", "full_text_search")
    queries, answers = lexical_wins_every_pseudo_query()
    # pseudo-queries are the chunks' own words: the keyword leg always wins them, which says little about
    # real questions, so an English model over English text keeps at least half its weight
    bounded_range = ratio_range(legs, frozenset({"en"}), "english")
    assert bounded_range.ratios == BOUNDED_RATIOS and bounded_range.reason.startswith("bounded")
    bounded = choose_weights(legs, answers, queries, weight_range=bounded_range)
    # no bounded ratio helps, so the tie goes to the lighter keyword weight
    assert bounded.weights == {"hybrid_search": 1.0, "full_text_search": 0.5}
    assert bounded.leg_mrr["full_text_search"] == 1.0 > bounded.fused_mrr
    assert bounded.to_dict()["weight_range"] == bounded_range.reason
    # the same model over French text is known to be weak: the keyword leg may take over
    full = ratio_range(legs, frozenset({"en"}), main_language(queries))
    assert full.ratios == RATIOS and "french" in full.reason and full.preferred == 1.0
    assert choose_weights(legs, answers, queries, weight_range=full).weights == {"hybrid_search": 0.0, "full_text_search": 1.0}
    # a model that declares no languages is not assumed weak; two legs of the same signals always have the
    # whole range, and graph search (fact vectors weighed by their evidence's words) is partly lexical
    assert ratio_range(legs, None, "french").ratios == BOUNDED_RATIOS
    assert ratio_range(("full_text_search", "sql_text_search"), frozenset({"en"}), "english").ratios == RATIOS
    assert ratio_range(("vector_search", "heta_graph_search"), frozenset({"en"}), "english").ratios == MILD_RATIOS
    assert ratio_range(("vector_search", "heta_graph_search"), frozenset({"en"}), "french").ratios == RATIOS
    assert ratio_range(("my_plugin_mode", "full_text_search"), frozenset({"en"}), "english").ratios == RATIOS


def test_pseudo_queries_may_take_weight_from_the_more_lexical_leg_never_give_it_weight():
    queries, lexical_answers = lexical_wins_every_pseudo_query()
    # the denser leg has every answer first and a wrong document fourth, which the keyword leg puts first: with
    # equal weights (k = 1) the wrong one wins (1/5 + 1/2 against 1/2), with the keyword leg at half it does not
    dense_answers = [
        {"hybrid_search": [hit(f"d{i}"), hit(f"x{i}"), hit(f"y{i}"), hit(f"a{i}")], "full_text_search": [hit(f"a{i}")]}
        for i in range(len(queries))
    ]
    # the keyword leg has every answer first, the denser leg fourth behind a wrong one: equal weights (k = 1) put
    # the answer first (1/2 + 1/5 against 1/2), the keyword leg at half does not (1/4 + 1/5)
    keyword_needed = [
        {"hybrid_search": [hit(f"n{i}"), hit(f"x{i}"), hit(f"y{i}"), hit(f"d{i}")], "full_text_search": [hit(f"d{i}")]}
        for i in range(len(queries))
    ]
    for legs in (("hybrid_search", "full_text_search"), ("full_text_search", "hybrid_search")):
        weight_range = ratio_range(legs, frozenset({"en"}), "english")
        assert "full_text_search ranks more by words" in weight_range.reason
        # the bias alone (no bounded ratio does better than another): the lighter keyword weight wins the tie
        favoured = choose_weights(legs, lexical_answers, queries, rrf_k=1, weight_range=weight_range)
        assert favoured.weights == {"hybrid_search": 1.0, "full_text_search": 0.5}
        # equal weights clearly better despite the bias: the keyword leg keeps its weight, never gains more
        needed = choose_weights(legs, keyword_needed, queries, rrf_k=1, weight_range=weight_range)
        assert needed.weights == {"hybrid_search": 1.0, "full_text_search": 1.0}
        assert needed.fused_mrr == 1.0 > needed.leg_mrr["hybrid_search"]
        against = choose_weights(legs, dense_answers, queries, rrf_k=1, weight_range=weight_range)
        assert against.weights == {"hybrid_search": 1.0, "full_text_search": 0.5}  # evidence despite the bias


def test_graph_search_beside_vector_search_may_gain_or_lose_half_and_loses_half_in_a_tie():
    # graph search ranks fact vectors and weighs them by their evidence's words: dense, and a little lexical,
    # so the pseudo-queries' bias is milder than for full-text search
    legs = ("vector_search", "heta_graph_search")
    queries = [PseudoQuery(text=f"q{i}", document_id=f"d{i}", language="english") for i in range(20)]
    graph_range = ratio_range(legs, frozenset({"en"}), "english")
    assert graph_range.ratios == MILD_RATIOS and graph_range.preferred == 0.5
    assert "heta_graph_search also ranks by words" in graph_range.reason
    # the graph leg has every answer first, the vector leg a wrong one first and the answer fourth: with k = 1,
    # equal weights tie the two (1/2 + 1/5 against 1/2 + ...), and only doubling the graph leg puts every answer first
    graph_better = [
        {"vector_search": [hit(f"n{i}"), hit(f"x{i}"), hit(f"y{i}"), hit(f"d{i}")], "heta_graph_search": [hit(f"d{i}"), hit(f"n{i}")]}
        for i in range(20)
    ]
    chosen = choose_weights(legs, graph_better, queries, rrf_k=1, weight_range=graph_range)
    assert chosen.weights == {"vector_search": 0.5, "heta_graph_search": 1.0}  # the graph leg gains, as it may not under BOUNDED
    # the pseudo-queries flatter the graph leg, so any weight above its half must win by more than BIAS_MARGIN: one
    # query of 40 that only the doubled graph gets right (+0.0125) is within what the bias explains; three (+0.0375)
    # are not
    forty = [PseudoQuery(text=f"q{i}", document_id=f"d{i}", language="english") for i in range(40)]
    agree_rows = [{"vector_search": [hit(f"d{i}")], "heta_graph_search": [hit(f"d{i}")]} for i in range(40)]
    for better, expected in ((1, {"vector_search": 1.0, "heta_graph_search": 0.5}), (3, {"vector_search": 0.5, "heta_graph_search": 1.0})):
        answers = graph_better[:better] + agree_rows[better:]
        assert choose_weights(legs, answers, forty, rrf_k=1, weight_range=graph_range).weights == expected
    # both legs agree on queries that flatter the graph leg: it is worth less on real questions, and loses half
    agree = [{"vector_search": [hit(f"d{i}")], "heta_graph_search": [hit(f"d{i}")]} for i in range(20)]
    assert choose_weights(legs, agree, queries, rrf_k=1, weight_range=graph_range).weights == {"vector_search": 1.0, "heta_graph_search": 0.5}
    # the other order of the legs: the same weights, named the same way
    swapped = ratio_range(legs[::-1], frozenset({"en"}), "english")
    assert swapped.preferred == 2.0
    assert choose_weights(legs[::-1], agree, queries, rrf_k=1, weight_range=swapped).weights == {"heta_graph_search": 0.5, "vector_search": 1.0}


def test_the_main_language_is_the_one_most_pseudo_queries_come_from():
    languages = ["french", "french", "english", ""]
    assert main_language([PseudoQuery(text="q", document_id="d", language=lang) for lang in languages]) == "french"
    assert main_language([PseudoQuery(text="q", document_id="d")]) == ""
