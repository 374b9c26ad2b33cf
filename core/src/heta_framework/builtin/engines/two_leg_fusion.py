"""Weighted RRF of two base modes, weights calibrated for the knowledge base unless the caller gives them.

``hybrid_search`` (vector + graph) and ``fusion_search`` (vector + full text) are this one
procedure over different legs; only their option names differ.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from heta_framework.builtin.engines.calibration import calibrated_weights, weights_metadata
from heta_framework.builtin.engines.composed_options import FusionOptions
from heta_framework.builtin.engines.fusion import RankedList, merge_issues, reciprocal_rank_fusion
from heta_framework.contracts.search import QueryContext, QueryRequest, QueryResponse


async def fuse_two_legs(
    mode: str,
    request: QueryRequest,
    context: QueryContext,
    options: FusionOptions,
    weights: Mapping[str, float],
    explicit_weights: Mapping[str, float] | None,
) -> QueryResponse:
    """``request`` answered by the two legs ``weights`` names, fused by weighted RRF: ``weights`` are the defaults
    merged with ``explicit_weights``; without ``explicit_weights`` calibration picks them. A leg weighted 0 is not run."""
    candidates = options.candidates(request.top_k)
    weights = dict(weights)
    calibration = None
    if explicit_weights is None:  # explicit weights win; the defaults are fitted to this knowledge base
        calibration = await calibrated_weights(context, mode, tuple(weights))
        if calibration is not None:
            weights = dict(calibration.weights)
    base_modes = [leg for leg, weight in weights.items() if weight > 0]
    responses = await asyncio.gather(*(context.query(request.text, mode=leg, top_k=candidates) for leg in base_modes))
    fused = reciprocal_rank_fusion(
        [RankedList(leg, response.results, weights[leg]) for leg, response in zip(base_modes, responses)],
        rrf_k=options.rrf_k,
    )
    metadata: dict[str, Any] = {
        "fusion": {"rrf_k": options.rrf_k, "candidate_top_k": candidates, **weights_metadata(weights, calibration, explicit_weights)}
    }
    issues = merge_issues(*(response.issues for response in responses))
    if issues:
        metadata["issues"] = issues
    return QueryResponse(results=fused[: request.top_k], metadata=metadata)
