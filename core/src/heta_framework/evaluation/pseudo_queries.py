"""Pseudo-queries: a known-item set a knowledge base makes from its own chunks, with no labels.

For a seeded sample of chunks, the chunk's most distinctive sentence (the highest mean
inverse document frequency of its words across all chunks, so not "See also." or a
boiler-plate line) becomes a query, cut to a few words; the chunk's document is the
answer and the sentence its gold evidence. A mode that finds the document a sentence
came from ranks high here. The queries copy the documents' own words, so lexical modes
are favoured a little over what real users' paraphrased questions would give: use the
ranking of modes, not the absolute numbers.

Standalone on purpose (plain ``(document id, text)`` pairs in, attrs values out), so the
fusion-weight calibration at build time can use the same pseudo-queries.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_WORD = re.compile(r"\w+", re.UNICODE)
MIN_WORDS = 5
MAX_WORDS = 12


@attrs.frozen
class PseudoQuery:
    text: str
    document_id: str
    evidence: str
    chunk_index: int


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _words(text: str) -> list[str]:
    return [w.casefold() for w in _WORD.findall(text)]


def pseudo_queries(chunks: Sequence[tuple[str, str]], count: int = 200, seed: int = 0) -> list[PseudoQuery]:
    """Up to ``count`` pseudo-queries from ``(document id, chunk text)`` pairs, one per sampled chunk."""
    frequency: Counter[str] = Counter()
    for _, text in chunks:
        frequency.update(set(_words(text)))
    total = max(len(chunks), 1)

    def distinctiveness(sentence: str) -> float:
        words = _words(sentence)
        return sum(math.log(total / frequency[w]) for w in words) / len(words)

    order = list(range(len(chunks)))
    random.Random(seed).shuffle(order)
    found: list[PseudoQuery] = []
    for index in order:
        if len(found) >= count:
            break
        document_id, text = chunks[index]
        candidates = [s for s in sentences(text) if len(_words(s)) >= MIN_WORDS]
        if not candidates:
            continue
        best = max(candidates, key=distinctiveness)
        query = " ".join(best.split()[:MAX_WORDS]).rstrip(".,;:!?")
        found.append(PseudoQuery(text=query, document_id=document_id, evidence=query, chunk_index=index))
    return found


def knowledge_base_chunks(kb: Any) -> list[tuple[str, str]]:
    """``(document id, chunk text)`` of every chunk ``split_documents`` stored, in catalog order."""
    from heta_framework.builtin.steps.split import chunks_key

    objects = kb.objects
    pairs: list[tuple[str, str]] = []
    for document_id in sorted(kb.documents):
        key = chunks_key(document_id)
        if objects.exists(key):
            pairs.extend((document_id, item["text"]) for item in objects.get_json(key))
    return pairs


def as_eval_set(queries: Iterable[PseudoQuery], name: str = "self"):
    """The pseudo-queries as an :class:`~heta_framework.evaluation.datasets.EvalSet`."""
    from heta_framework.evaluation.datasets import EvalQuery, EvalSet

    return EvalSet(name=name, queries=[
        EvalQuery(id=f"pseudo-{q.chunk_index}", text=q.text, relevance={q.document_id: 1.0}, evidence=(q.evidence,))
        for q in queries
    ])
