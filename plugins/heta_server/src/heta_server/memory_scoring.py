"""The Hebb Mind composite score of one memory (chunk), from its recency, importance and relevance.

    score = (w_recency * recency + w_importance * importance + w_relevance * relevance)
            / (w_recency + w_importance + w_relevance)

- recency = decay ** hours since the chunk was last accessed (returned by ``memory_search``),
  or since its document was added when it never was; 1.0 for "just now".
- importance = the document's ``importance`` metadata (0-10) / 10; ``DEFAULT_IMPORTANCE`` when absent.
- relevance = the chunk's fused RRF score / the score of a chunk that every leg ranked first
  (``relevance_of``): 1.0 when all legs agree it is the best match, about 1/3 for the first hit
  of one leg of three that the other two did not find. Dividing by the request's best score
  instead made every candidate look relevant (1.00 / 0.97 / 0.96 for a matching chunk and two
  unrelated ones: RRF's smoothing keeps neighbouring ranks close), so relevance hardly weighed
  against recency and importance.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from heta_server.memory_options import DEFAULT_IMPORTANCE

SECONDS_PER_HOUR = 3600.0


@attrs.frozen
class MemoryScores:
    score: float
    recency_score: float
    importance_score_normalized: float
    relevance_score: float


def recency(last_access: float | None, now: float, decay: float) -> float:
    """``decay ** hours`` since ``last_access`` (a moment in the future counts as now)."""
    if last_access is None:
        return 1.0
    hours = max(0.0, (now - last_access) / SECONDS_PER_HOUR)
    return decay**hours


def importance_of(metadata: Mapping[str, Any]) -> tuple[float, bool]:
    """(importance on the 0-10 scale, whether the metadata value was usable); bad values get the default."""
    value = metadata.get("importance")
    if value is None:
        return DEFAULT_IMPORTANCE, True
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        return DEFAULT_IMPORTANCE, False
    if not math.isfinite(number) or not 0 <= number <= 10:
        return DEFAULT_IMPORTANCE, False
    return number, True


def best_possible_rrf(legs: int, rrf_k: float) -> float:
    """The fused score of a chunk ranked first by each of ``legs`` equally weighted lists (RRF, ``rrf_k``)."""
    return legs / (rrf_k + 1.0)


def relevance_of(fused_score: float, ceiling: float) -> float:
    """``fused_score`` on the 0-1 scale of ``ceiling`` (``best_possible_rrf``); a graph fact counts once per leg
    for its evidence, so no chunk goes above it, but a rounding step never makes more than 1.0."""
    return min(1.0, fused_score / ceiling) if ceiling > 0 else 0.0


def composite(recency_score: float, importance_score: float, relevance_score: float, weights: Mapping[str, float]) -> MemoryScores:
    w_r, w_i, w_v = weights["weight_recency"], weights["weight_importance"], weights["weight_relevance"]
    total = w_r + w_i + w_v
    score = (w_r * recency_score + w_i * importance_score + w_v * relevance_score) / total
    return MemoryScores(score, recency_score, importance_score, relevance_score)
