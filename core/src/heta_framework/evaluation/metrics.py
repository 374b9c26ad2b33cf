"""Evaluation metrics: pure functions of a ranking, the gold labels and the answer text.

Conventions (the ones BEIR reports through trec_eval, so numbers compare):

- A *ranking* is a list of document ids, best first; a document that appears again
  lower down (another chunk of it) is counted once, at its best position
  (:func:`ranked_documents`).
- *Relevance* maps a document id to a grade; a grade above 0 is relevant. Graded
  labels (BEIR qrels) feed nDCG with a linear gain (``grade / log2(rank + 1)``).
- Precision@k divides by ``k`` (a short ranking is not rewarded for being short);
  MAP@k divides by the number of relevant documents (trec_eval's ``map_cut``).
- A query with no relevant document has no Recall, MAP or nDCG (``None``): it is left
  out of the means rather than counted as 0 or 1.
- Ties: results with the same score come in no meaningful order, so
  :func:`ranked_documents` orders each run of equal scores by document id. The same
  results then always give the same numbers, whatever order an engine returned them in.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

Relevance = Mapping[str, float]


def ranked_documents(scored: Iterable[tuple[str, float | None]]) -> list[str]:
    """Document ids, best first, from ``(document id, score)`` pairs in the engine's order.

    A document ranks by its first (best) appearance. Within a run of neighbours with the
    same score, documents are ordered by id, so tied results give stable metrics.
    """
    seen: set[str] = set()
    firsts: list[tuple[str, float | None]] = []
    for document_id, score in scored:
        if document_id and document_id not in seen:
            seen.add(document_id)
            firsts.append((document_id, score))
    ranking: list[str] = []
    position = 0
    while position < len(firsts):
        end = position + 1
        score = firsts[position][1]
        while score is not None and end < len(firsts) and firsts[end][1] == score:
            end += 1
        ranking.extend(sorted(document_id for document_id, _ in firsts[position:end]))
        position = end
    return ranking


def _relevant(relevance: Relevance) -> set[str]:
    return {document_id for document_id, grade in relevance.items() if grade > 0}


def precision_at_k(ranking: Sequence[str], relevance: Relevance, k: int) -> float:
    relevant = _relevant(relevance)
    return sum(1 for document_id in ranking[:k] if document_id in relevant) / k


def recall_at_k(ranking: Sequence[str], relevance: Relevance, k: int) -> float | None:
    relevant = _relevant(relevance)
    if not relevant:
        return None
    return sum(1 for document_id in ranking[:k] if document_id in relevant) / len(relevant)


def mrr_at_k(ranking: Sequence[str], relevance: Relevance, k: int) -> float:
    """1 / rank of the first relevant document within the top ``k`` (0 when there is none)."""
    relevant = _relevant(relevance)
    for rank, document_id in enumerate(ranking[:k], start=1):
        if document_id in relevant:
            return 1.0 / rank
    return 0.0


def average_precision_at_k(ranking: Sequence[str], relevance: Relevance, k: int) -> float | None:
    """Mean over the relevant documents of the precision at each one's rank (0 for those not in the top ``k``)."""
    relevant = _relevant(relevance)
    if not relevant:
        return None
    hits, total = 0, 0.0
    for rank, document_id in enumerate(ranking[:k], start=1):
        if document_id in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant)


def ndcg_at_k(ranking: Sequence[str], relevance: Relevance, k: int) -> float | None:
    """Discounted cumulative gain of the top ``k`` over that of the best possible ranking (linear gain)."""
    ideal_grades = sorted((grade for grade in relevance.values() if grade > 0), reverse=True)[:k]
    if not ideal_grades:
        return None
    dcg = sum(max(relevance.get(document_id, 0.0), 0.0) / math.log2(rank + 1) for rank, document_id in enumerate(ranking[:k], start=1))
    ideal = sum(grade / math.log2(rank + 1) for rank, grade in enumerate(ideal_grades, start=1))
    return dcg / ideal


def document_metrics(ranking: Sequence[str], relevance: Relevance, k: int) -> dict[str, float | None]:
    """Every document metric at ``k`` for one query, named as in the reports (``ndcg@10``, ...)."""
    return {
        f"ndcg@{k}": ndcg_at_k(ranking, relevance, k),
        f"map@{k}": average_precision_at_k(ranking, relevance, k),
        f"mrr@{k}": mrr_at_k(ranking, relevance, k) if _relevant(relevance) else None,
        f"recall@{k}": recall_at_k(ranking, relevance, k),
        f"precision@{k}": precision_at_k(ranking, relevance, k) if _relevant(relevance) else None,
    }


# --- text ------------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation) | {"\u201c", "\u201d", "\u2018", "\u2019", "\u2014", "\u2013"}


def normalize_text(text: str) -> str:
    """SQuAD's answer normalisation: case-folded, punctuation and English articles removed, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(" " if character in _PUNCTUATION else character for character in text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def evidence_recall_at_k(retrieved_texts: Sequence[str], gold_evidence: Sequence[str], k: int) -> float | None:
    """Share of the gold evidence strings found (after :func:`normalize_text`) in the texts of the top ``k`` results.

    The texts are joined, so a string that a chunk boundary cuts in two still counts
    when both neighbouring chunks were retrieved.
    """
    wanted = [normalize_text(evidence) for evidence in gold_evidence if normalize_text(evidence)]
    if not wanted:
        return None
    haystack = " " + " ".join(normalize_text(text) for text in retrieved_texts[:k]) + " "
    return sum(1 for evidence in wanted if f" {evidence} " in haystack) / len(wanted)


def exact_match(answer: str, gold: str) -> float:
    return float(normalize_text(answer) == normalize_text(gold))


def contains_answer(answer: str, gold: str) -> float:
    """1 when the normalised gold answer appears, as whole words, in the normalised answer."""
    wanted = normalize_text(gold)
    return float(bool(wanted) and f" {wanted} " in f" {normalize_text(answer)} ")


def token_f1(answer: str, gold: str) -> float:
    """SQuAD's token F1 between the answer and the gold answer (1.0 when both are empty)."""
    predicted, expected = normalize_text(answer).split(), normalize_text(gold).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


_CITATION_MARKER = re.compile(r"\[\d+\]")


def answer_metrics(answer: str | None, gold: str | None) -> dict[str, float | None]:
    """Exact match, contains and token F1; ``None`` each when the mode gave no answer or there is no gold answer.

    Citation markers (``[1]``) are removed first: they point at results, they are not the answer's words.
    """
    if answer is None or gold is None:
        return {"answer_exact_match": None, "answer_contains": None, "answer_f1": None}
    answer = _CITATION_MARKER.sub(" ", answer)
    return {"answer_exact_match": exact_match(answer, gold), "answer_contains": contains_answer(answer, gold), "answer_f1": token_f1(answer, gold)}


# --- aggregates ------------------------------------------------------------------------------------


def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not ``None`` (``None`` when there are none)."""
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def latency_percentiles_ms(seconds: Sequence[float]) -> dict[str, float | None]:
    """p50 and p95 in milliseconds, linearly interpolated between the closest ranks (numpy's default)."""
    if not seconds:
        return {"p50_ms": None, "p95_ms": None}
    p50, p95 = np.percentile(np.asarray(seconds, dtype=float) * 1000, [50, 95])
    return {"p50_ms": round(float(p50), 3), "p95_ms": round(float(p95), 3)}
