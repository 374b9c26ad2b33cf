"""The typed options of the composed modes (``candidate_top_k``, ``rrf_k``, ``hybrid_weights``, ``max_rounds``).

Names and defaults are the spec's. A bad value or an unknown option raises
``InvalidQueryError`` before the mode runs (``heta_framework.contracts.query_options``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from heta_framework.builtin.engines.fusion import DEFAULT_RRF_K
from heta_framework.common.validators import number, result_count, weights_for, whole_number
from heta_framework.contracts.query_options import accepted_options

MAX_DEFAULT_CANDIDATES = 50
DEFAULT_HYBRID_WEIGHTS = {"vector_search": 1.0, "heta_graph_search": 1.0}
DEFAULT_FUSION_WEIGHTS = {"vector_search": 1.0, "full_text_search": 1.0}
#: the two lists heta_rerank_search fuses before any reranker, equal unless calibrated
DEFAULT_RERANK_WEIGHTS = {"hybrid_search": 1.0, "full_text_search": 1.0}
DEFAULT_MAX_ROUNDS = 3


def _weights(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else dict(value) if isinstance(value, Mapping) else value


@attrs.frozen
class FusionOptions:
    """Options of every mode that fuses ranked lists by RRF."""

    #: candidates recalled from each base mode; default ``min(top_k * 3, 50)``
    candidate_top_k: int | None = attrs.field(
        default=None, validator=result_count(optional=True), metadata={"default_doc": "min(top_k * 3, 50)"}
    )
    #: the RRF smoothing constant
    rrf_k: float = attrs.field(default=DEFAULT_RRF_K, validator=number(minimum=0))

    def candidates(self, top_k: int) -> int:
        return self.candidate_top_k if self.candidate_top_k is not None else min(top_k * 3, MAX_DEFAULT_CANDIDATES)


@attrs.frozen
class HybridSearchOptions(FusionOptions):
    """``hybrid_search`` options; modes left out of ``hybrid_weights`` keep their default weight."""

    #: fusion weight per base mode, default ``{"vector_search": 1.0, "heta_graph_search": 1.0}``
    hybrid_weights: Mapping[str, float] | None = attrs.field(
        default=None,
        converter=_weights,
        validator=weights_for(DEFAULT_HYBRID_WEIGHTS),
        metadata={"default_doc": '{"vector_search": 1.0, "heta_graph_search": 1.0}'},
    )

    def weights(self) -> dict[str, float]:
        return {**DEFAULT_HYBRID_WEIGHTS, **{mode: float(w) for mode, w in (self.hybrid_weights or {}).items()}}


@attrs.frozen
class FusionSearchOptions(FusionOptions):
    """``fusion_search`` options; modes left out of ``fusion_weights`` keep their default weight."""

    #: fusion weight per base mode, default ``{"vector_search": 1.0, "full_text_search": 1.0}``
    fusion_weights: Mapping[str, float] | None = attrs.field(
        default=None,
        converter=_weights,
        validator=weights_for(DEFAULT_FUSION_WEIGHTS),
        metadata={"default_doc": '{"vector_search": 1.0, "full_text_search": 1.0}'},
    )

    def weights(self) -> dict[str, float]:
        return {**DEFAULT_FUSION_WEIGHTS, **{mode: float(w) for mode, w in (self.fusion_weights or {}).items()}}


@attrs.frozen
class RerankSearchOptions(HybridSearchOptions):
    """``heta_rerank_search`` options; ``hybrid_weights`` is handed down to ``hybrid_search``."""


@attrs.frozen
class RewriteSearchOptions(HybridSearchOptions):
    """``heta_rewrite_search`` options; the fusion options are also handed down to the base mode."""


@attrs.frozen
class MultihopSearchOptions(HybridSearchOptions):
    """``heta_multihop_search`` options; the fusion options are handed down to the base mode."""

    #: search rounds at most
    max_rounds: int = attrs.field(default=DEFAULT_MAX_ROUNDS, validator=whole_number(1))


#: options a composed mode hands down to the mode it calls (never ``answer``: only the outermost mode answers)
FORWARDED_OPTIONS = ("candidate_top_k", "rrf_k", "hybrid_weights")


def forwarded_options(request: Any, context: Any, mode: str, *, candidates: int | None = None) -> dict[str, Any]:
    """The fusion options given to ``request`` that ``mode``'s engine takes; ``candidates`` pins ``candidate_top_k``."""
    options = {name: request.options[name] for name in FORWARDED_OPTIONS if name in request.options}
    if candidates is not None:
        options["candidate_top_k"] = candidates
    return accepted_options(context.knowledge_base.query_engines.get(mode), options)
