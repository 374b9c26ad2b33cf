"""BM25 over the wiki's sections, in memory. The knowledge base's text index holds its chunks, and a section there
would show up in ``full_text_search``; the sections are one per page part (a few per document), so scoring them
here stays cheap for the knowledge bases a wiki is written for. Words are lower-cased runs of letters and digits;
CJK text is scored by its single characters and their pairs."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
K1, B = 1.2, 0.75
#: sections' term counts kept per process, by the hash of their text: content-addressed, so a rewritten or removed
#: section is never scored from stale counts, and a query pays only for reading the sections file
BAG_CACHE_SIZE = 100_000
_bags: dict[str, Counter[str]] = {}


def terms(text: str) -> list[str]:
    found = []
    for word in _WORD.findall(text.casefold()):
        if _CJK.search(word):
            chars = [c for c in word]
            found.extend(chars)
            found.extend(a + b for a, b in zip(chars, chars[1:]))
        else:
            found.append(word)
    return found


def _bag(section: dict[str, Any]) -> Counter[str]:
    key = section.get("text_hash")
    if key is None:
        return Counter(terms(section["text"]))
    bag = _bags.get(key)
    if bag is None:
        if len(_bags) >= BAG_CACHE_SIZE:
            _bags.clear()
        bag = _bags[key] = Counter(terms(section["text"]))
    return bag


def bm25(query: str, sections: Sequence[dict[str, Any]], top_k: int) -> list[tuple[dict[str, Any], float]]:
    """The ``top_k`` sections best matching ``query`` with a score above 0, best first (ties by id). The statistics
    (document frequencies, average length) are those of ``sections``, the caller's readable ones: a score never
    depends on what the caller may not read."""
    wanted = set(terms(query))
    if not wanted or not sections:
        return []
    bags = [_bag(s) for s in sections]
    lengths = [sum(bag.values()) for bag in bags]
    average = sum(lengths) / len(lengths) or 1.0
    frequency = {t: sum(1 for bag in bags if t in bag) for t in wanted}
    scored = []
    for section, bag, length in zip(sections, bags, lengths):
        score = 0.0
        for term in wanted:
            if term in bag:
                idf = math.log(1 + (len(sections) - frequency[term] + 0.5) / (frequency[term] + 0.5))
                score += idf * bag[term] * (K1 + 1) / (bag[term] + K1 * (1 - B + B * length / average))
        if score > 0:
            scored.append((section, score))
    scored.sort(key=lambda item: (-item[1], item[0]["id"]))
    return scored[:top_k]
