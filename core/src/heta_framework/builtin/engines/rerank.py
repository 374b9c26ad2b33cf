"""``heta_rerank_search``: RRF of ``hybrid_search`` and ``full_text_search``, then the reranker if the recipe has one.

The RRF is flat: ``hybrid_search``'s results count with their own fused scores (``fusion.py``, "Fusing a
fused list"), so vector, graph and full-text ranks weigh in one sum.

The reranker is an optional improvement, not a requirement: without
``models.reranker`` the RRF order stands, and a failing reranker call falls back
to it with a ``rerank_failed`` issue instead of failing the query.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs

from heta_framework.builtin.engines.calibration import calibrated_weights, weights_metadata
from heta_framework.builtin.engines.composed_options import DEFAULT_RERANK_WEIGHTS, RerankSearchOptions, forwarded_options
from heta_framework.builtin.engines.fusion import RankedList, merge_issues, reciprocal_rank_fusion
from heta_framework.builtin.engines.mode_assets import RERANK_ASSETS
from heta_framework.builtin.engines.model_failures import describe_failure
from heta_framework.contracts.query_options import query_options
from heta_framework.contracts.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAssetRef, query_issue

log = logging.getLogger(__name__)

RERANKER = "models.reranker"


class RerankSearchEngine:
    """High-precision retrieval. Options: ``candidate_top_k`` (default ``min(top_k * 3, 50)``), ``rrf_k`` (60).

    ``hybrid_weights`` is handed down to ``hybrid_search``. The two lists are fused with weights
    calibrated for the knowledge base (``calibration.py``), unless ``hybrid_weights`` is given: the
    caller has taken the weighting in hand, and the lists then weigh the same, as in plain RRF.
    """

    mode: ClassVar[str] = "heta_rerank_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = RERANK_ASSETS
    options_type: ClassVar[type] = RerankSearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: RerankSearchOptions = query_options(self, request)
        candidates = options.candidates(request.top_k)
        smoothing = options.rrf_k
        hybrid, full_text = await asyncio.gather(
            context.query(
                request.text, mode="hybrid_search", top_k=candidates, options=forwarded_options(request, context, "hybrid_search")
            ),
            context.query(request.text, mode="full_text_search", top_k=candidates),
        )
        weights = dict(DEFAULT_RERANK_WEIGHTS)
        calibration = None
        if options.hybrid_weights is None:
            calibration = await calibrated_weights(context, self.mode, tuple(weights))
            if calibration is not None:
                weights = dict(calibration.weights)
        fused = reciprocal_rank_fusion(
            [RankedList("hybrid_search", hybrid.results, weights["hybrid_search"], fused=True),
             RankedList("full_text_search", full_text.results, weights["full_text_search"])],
            rrf_k=smoothing,
        )
        issues = merge_issues(hybrid.issues, full_text.issues)
        ranking = "rrf"
        results = fused[: request.top_k]
        if fused and context.has_component(RERANKER):
            try:
                results = await _rerank(context, request, fused)
                ranking = "reranker"
            except Exception as exc:  # any provider failure: the RRF order is still a good answer
                log.warning("reranker failed, keeping the RRF order: %s", type(exc).__name__)
                issues.append(
                    query_issue(
                        "rerank_failed",
                        f"The reranker call failed ({describe_failure(exc, context)}); results keep the RRF order.",
                        "used_rrf_order",
                    )
                )
        fusion = {"rrf_k": smoothing, "candidate_top_k": candidates, **weights_metadata(weights, calibration, options.hybrid_weights)}
        metadata: dict[str, Any] = {"fusion": fusion, "ranking": ranking}
        if issues:
            metadata["issues"] = issues
        return QueryResponse(results=results, metadata=metadata)


async def _rerank(context: QueryContext, request: QueryRequest, fused: Sequence[QueryResult]) -> list[QueryResult]:
    reranker = context.reranker()
    hits = await reranker.rerank(request.text, [result.text for result in fused], min(request.top_k, len(fused)))
    reranked: list[QueryResult] = []
    seen: set[int] = set()
    for hit in hits:
        if not 0 <= hit.index < len(fused) or hit.index in seen:
            raise ValueError(f"reranker returned index {hit.index} for {len(fused)} documents")
        seen.add(hit.index)
        result = fused[hit.index]
        metadata = {**result.metadata, "rrf_score": result.score}
        reranked.append(attrs.evolve(result, score=float(hit.score), metadata=metadata))
    if not reranked:
        raise ValueError("reranker returned no results")
    return reranked[: request.top_k]

