"""Evaluation metrics against values worked out by hand (log2(3) = 1.58496, log2(5) = 2.32193)."""

from __future__ import annotations

import math

import pytest
from heta_framework.evaluation.metrics import (
    answer_metrics,
    average_precision_at_k,
    contains_answer,
    document_metrics,
    evidence_recall_at_k,
    exact_match,
    latency_percentiles_ms,
    mean,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    ranked_documents,
    recall_at_k,
    token_f1,
)
from heta_framework.evaluation.report import summarize

RANKING = ["d1", "d2", "d3", "d4"]
TWO_RELEVANT = {"d2": 1, "d4": 1}


def test_binary_metrics_at_3():
    assert precision_at_k(RANKING, TWO_RELEVANT, 3) == pytest.approx(1 / 3)
    assert recall_at_k(RANKING, TWO_RELEVANT, 3) == pytest.approx(1 / 2)
    assert mrr_at_k(RANKING, TWO_RELEVANT, 3) == pytest.approx(1 / 2)
    # only d2 (rank 2, precision 1/2) is in the top 3; divided by both relevant documents
    assert average_precision_at_k(RANKING, TWO_RELEVANT, 3) == pytest.approx(0.25)
    # DCG = 1/log2(3); ideal = 1 + 1/log2(3)
    assert ndcg_at_k(RANKING, TWO_RELEVANT, 3) == pytest.approx(0.63093 / 1.63093, abs=1e-5)


def test_binary_metrics_at_4():
    assert average_precision_at_k(RANKING, TWO_RELEVANT, 4) == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert ndcg_at_k(RANKING, TWO_RELEVANT, 4) == pytest.approx((0.63093 + 0.43068) / 1.63093, abs=1e-5)
    assert recall_at_k(RANKING, TWO_RELEVANT, 4) == 1.0
    assert precision_at_k(RANKING, TWO_RELEVANT, 4) == 0.5


def test_precision_divides_by_k_even_for_a_short_ranking():
    assert precision_at_k(["d2"], TWO_RELEVANT, 10) == pytest.approx(0.1)


def test_graded_ndcg_uses_linear_gain():
    # DCG = 1/log2(2) + 2/log2(3) = 2.26186; ideal = 2 + 1/log2(3) = 2.63093
    assert ndcg_at_k(["b", "a"], {"a": 2, "b": 1}, 2) == pytest.approx(2.26186 / 2.63093, abs=1e-5)
    assert ndcg_at_k(["a", "b"], {"a": 2, "b": 1}, 2) == pytest.approx(1.0)


def test_grade_zero_is_not_relevant():
    assert recall_at_k(["x"], {"x": 0, "y": 1}, 5) == 0.0
    assert mrr_at_k(["x", "y"], {"x": 0, "y": 1}, 5) == 0.5


def test_empty_results_score_zero():
    assert precision_at_k([], TWO_RELEVANT, 5) == 0.0
    assert recall_at_k([], TWO_RELEVANT, 5) == 0.0
    assert mrr_at_k([], TWO_RELEVANT, 5) == 0.0
    assert average_precision_at_k([], TWO_RELEVANT, 5) == 0.0
    assert ndcg_at_k([], TWO_RELEVANT, 5) == 0.0


def test_a_query_without_relevant_documents_has_no_score():
    assert recall_at_k(RANKING, {}, 5) is None
    assert average_precision_at_k(RANKING, {"d1": 0}, 5) is None
    assert ndcg_at_k(RANKING, {}, 5) is None
    assert set(document_metrics(RANKING, {}, 5).values()) == {None}


def test_document_metrics_names_carry_k():
    metrics = document_metrics(RANKING, TWO_RELEVANT, 3)
    assert metrics == {
        "ndcg@3": pytest.approx(0.386853, abs=1e-5), "map@3": 0.25, "mrr@3": 0.5, "recall@3": 0.5, "precision@3": pytest.approx(1 / 3),
    }


def test_ties_are_ordered_by_document_id_whatever_order_they_came_in():
    assert ranked_documents([("c", 1.0), ("a", 1.0), ("b", 0.5)]) == ["a", "c", "b"]
    assert ranked_documents([("a", 1.0), ("c", 1.0), ("b", 0.5)]) == ["a", "c", "b"]
    # so a relevant document tied for first scores the same in both orders
    for pairs in ([("c", 1.0), ("a", 1.0)], [("a", 1.0), ("c", 1.0)]):
        assert mrr_at_k(ranked_documents(pairs), {"c": 1}, 10) == 0.5


def test_a_document_ranks_by_its_best_chunk_and_counts_once():
    assert ranked_documents([("x", 3.0), ("y", 2.0), ("x", 1.0), ("z", 0.5)]) == ["x", "y", "z"]
    assert precision_at_k(ranked_documents([("x", 3.0), ("x", 2.0)]), {"x": 1}, 2) == 0.5


def test_engine_order_is_kept_between_different_scores_and_without_scores():
    # a composed mode's order wins even when its scores are not monotonic; None never ties
    assert ranked_documents([("b", 0.1), ("a", 0.9)]) == ["b", "a"]
    assert ranked_documents([("b", None), ("a", None)]) == ["b", "a"]


def test_evidence_recall_finds_whole_words_across_neighbouring_results():
    texts = ["The Quick brown fox.", "jumps over"]
    gold = ["quick brown", "fox jumps", "lazy dog"]
    assert evidence_recall_at_k(texts, gold, 2) == pytest.approx(2 / 3)
    assert evidence_recall_at_k(texts, gold, 1) == pytest.approx(1 / 3)
    assert evidence_recall_at_k(texts, ["own"], 2) == 0.0  # inside "brown", not a word of it
    assert evidence_recall_at_k([], ["quick"], 5) == 0.0
    assert evidence_recall_at_k(texts, [], 5) is None


def test_answer_metrics():
    assert exact_match("The Eiffel Tower!", "eiffel tower") == 1.0
    assert exact_match("Eiffel Tower in Paris", "eiffel tower") == 0.0
    assert contains_answer("It is the Eiffel Tower, in Paris.", "Eiffel Tower") == 1.0
    assert contains_answer("towers", "tower") == 0.0
    # articles dropped: "cat sat on mat" against "cat on mat": P = 3/4, R = 1
    assert token_f1("the cat sat on the mat", "a cat on a mat") == pytest.approx(2 * 0.75 / 1.75)
    assert token_f1("dog", "cat") == 0.0
    assert token_f1("", "") == 1.0
    assert answer_metrics(None, "x") == {"answer_exact_match": None, "answer_contains": None, "answer_f1": None}
    assert answer_metrics("Paris", "paris")["answer_exact_match"] == 1.0
    # citation markers are not words of the answer
    assert answer_metrics("Paris [1][2].", "paris") == {"answer_exact_match": 1.0, "answer_contains": 1.0, "answer_f1": 1.0}


def test_latency_percentiles_interpolate():
    assert latency_percentiles_ms([0.004, 0.001, 0.003, 0.002]) == {"p50_ms": 2.5, "p95_ms": 3.85}
    assert latency_percentiles_ms([]) == {"p50_ms": None, "p95_ms": None}


def test_mean_skips_missing_values():
    assert mean([1.0, None, 0.0]) == 0.5
    assert mean([None]) is None


def test_summary_per_recipe_and_mode():
    rows = [
        {"recipe": "r", "mode": "m", "query_id": "1", "latency_s": 0.001, "metrics": {"mrr@10": 1.0, "recall@10": None}, "llm_calls": 2},
        {"recipe": "r", "mode": "m", "query_id": "2", "latency_s": 0.003, "metrics": {"mrr@10": 0.5, "recall@10": 1.0}, "llm_calls": 1},
        {"recipe": "r", "mode": "m", "query_id": "3", "latency_s": 9.0, "error": "bad query"},
        {"recipe": "r", "mode": "other", "query_id": "1", "latency_s": 0.002, "metrics": {"mrr@10": 0.0}},
    ]
    first, second = summarize(rows)
    assert (first.mode, first.queries, first.errors) == ("m", 3, 1)
    assert first.metrics == {"mrr@10": 0.75, "recall@10": 1.0}
    assert (first.p50_ms, first.llm_calls_per_query) == (2.0, 1.5)  # the failed query's time is not a latency
    assert second.llm_calls_per_query is None and math.isclose(second.p50_ms, 2.0)
