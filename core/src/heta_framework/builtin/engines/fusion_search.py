"""``fusion_search``: weighted RRF of ``vector_search`` and ``full_text_search``, no graph needed.

The seed's ``hybrid_search`` fuses vectors with the *graph*; a knowledge base built
without the graph plugin (the minimal install: vectors and full text) still wants
dense and lexical evidence together, and this is that mode: the same calibrated
weighted RRF as ``hybrid_search`` (``two_leg_fusion.py``), over other legs.
"""

from __future__ import annotations

from typing import ClassVar

from heta_framework.builtin.engines.composed_options import FusionSearchOptions
from heta_framework.builtin.engines.mode_assets import FUSION_ASSETS
from heta_framework.builtin.engines.two_leg_fusion import fuse_two_legs
from heta_framework.contracts.query_options import query_options
from heta_framework.contracts.search import QueryContext, QueryRequest, QueryResponse, SearchAssetRef


class FusionSearchEngine:
    """Vector chunks and full-text chunks, fused by rank, never by raw score.

    Options: ``candidate_top_k`` (default ``min(top_k * 3, 50)``), ``rrf_k`` (60),
    ``fusion_weights`` (``{"vector_search": 1.0, "full_text_search": 1.0}``). Without
    ``fusion_weights`` the weights are calibrated for the knowledge base (``calibration.py``).
    """

    mode: ClassVar[str] = "fusion_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = FUSION_ASSETS
    options_type: ClassVar[type] = FusionSearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: FusionSearchOptions = query_options(self, request)
        return await fuse_two_legs(self.mode, request, context, options, options.weights(), options.fusion_weights)
