"""Turning scores into ``RerankHit`` lists: best first, ``top_n`` at most."""

from __future__ import annotations

from collections.abc import Iterable

from heta_framework.common.models import RerankHit


def best_first(scored: Iterable[tuple[int, float]], top_n: int) -> list[RerankHit]:
    """Highest score first; equal scores keep document order, so results are deterministic."""
    ordered = sorted(scored, key=lambda pair: (-pair[1], pair[0]))
    return [RerankHit(index=int(index), score=float(score)) for index, score in ordered[: max(0, top_n)]]
