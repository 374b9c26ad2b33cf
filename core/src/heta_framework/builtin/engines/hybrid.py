"""``hybrid_search``: weighted RRF of ``vector_search`` and ``heta_graph_search``."""

from __future__ import annotations

from typing import ClassVar

from heta_framework.builtin.engines.composed_options import DEFAULT_HYBRID_WEIGHTS, HybridSearchOptions
from heta_framework.builtin.engines.mode_assets import HYBRID_ASSETS
from heta_framework.builtin.engines.two_leg_fusion import fuse_two_legs
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
        return await fuse_two_legs(self.mode, request, context, options, options.weights(), options.hybrid_weights)
