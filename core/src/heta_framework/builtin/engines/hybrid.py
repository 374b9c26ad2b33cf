"""``hybrid_search``: weighted RRF of ``vector_search`` and ``heta_graph_search``."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from heta_framework.builtin.engines.calibration import calibrated_weights, weights_metadata
from heta_framework.builtin.engines.composed_options import DEFAULT_HYBRID_WEIGHTS, HybridSearchOptions
from heta_framework.builtin.engines.fusion import RankedList, merge_issues, reciprocal_rank_fusion
from heta_framework.builtin.engines.mode_assets import HYBRID_ASSETS
from heta_framework.contracts.query_options import query_options
from heta_framework.contracts.search import QueryContext, QueryRequest, QueryResponse, SearchAssetRef

__all__ = ["DEFAULT_HYBRID_WEIGHTS", "HybridSearchEngine"]


class HybridSearchEngine:
    """Vector chunks and graph facts (with their evidence chunks), fused by rank, never by raw score.

    Options: ``candidate_top_k`` (default ``min(top_k * 3, 50)``), ``rrf_k`` (60),
    ``hybrid_weights`` (``{"vector_search": 1.0, "heta_graph_search": 1.0}``). Without
    ``hybrid_weights`` the weights are calibrated for the knowledge base (``calibration.py``).
    """

    mode: ClassVar[str] = "hybrid_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = HYBRID_ASSETS
    options_type: ClassVar[type] = HybridSearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: HybridSearchOptions = query_options(self, request)
        candidates = options.candidates(request.top_k)
        smoothing = options.rrf_k
        weights = options.weights()
        calibration = None
        if options.hybrid_weights is None:  # explicit weights win; the defaults are fitted to this knowledge base
            calibration = await calibrated_weights(context, self.mode, tuple(DEFAULT_HYBRID_WEIGHTS))
            if calibration is not None:
                weights = dict(calibration.weights)
        base_modes = [mode for mode, weight in weights.items() if weight > 0]
        responses = await asyncio.gather(*(context.query(request.text, mode=mode, top_k=candidates) for mode in base_modes))
        fused = reciprocal_rank_fusion(
            [RankedList(mode, response.results, weights[mode]) for mode, response in zip(base_modes, responses)],
            rrf_k=smoothing,
        )
        metadata: dict[str, Any] = {"fusion": {"rrf_k": smoothing, "candidate_top_k": candidates, **weights_metadata(weights, calibration, options.hybrid_weights)}}
        issues = merge_issues(*(response.issues for response in responses))
        if issues:
            metadata["issues"] = issues
        return QueryResponse(results=fused[: request.top_k], metadata=metadata)
