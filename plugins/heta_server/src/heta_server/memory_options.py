"""The typed options of ``memory_search`` (names from the Hebb Mind spec: ``weight_recency`` ...).

A bad value or an unknown option raises ``InvalidQueryError`` before the mode runs
(``heta_framework.kb.query_options``), like every other mode.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from heta_framework.builtin.engines.composed_options import FusionOptions
from heta_framework.common.validators import OptionValueError, boolean, number, result_count

#: recency per hour since the last access; 0.995 halves a memory's recency in about 138 hours (~6 days)
DEFAULT_RECENCY_DECAY = 0.995
#: the importance of a document that does not say (on the spec's 0-10 scale)
DEFAULT_IMPORTANCE = 5.0


def _tags(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence) and all(isinstance(tag, str) for tag in value):
        return tuple(value)
    raise OptionValueError("tags", f"tags must be text or a list of text, got {value!r}")


def _not_all_zero(instance: MemorySearchOptions) -> None:
    if instance.weight_recency + instance.weight_importance + instance.weight_relevance <= 0:
        raise OptionValueError(
            "weight_relevance",
            "weight_recency, weight_importance and weight_relevance are all 0; at least one must be above 0",
        )


@attrs.frozen
class MemorySearchOptions(FusionOptions):
    """``memory_search`` options: composite weights, recency decay, rerank, related expansion, access updates."""

    #: weight of recency (decay ** hours since the chunk was last returned) in the composite score
    weight_recency: float = attrs.field(default=1.0, validator=number(minimum=0))
    #: weight of importance (the document's ``importance`` metadata, 0-10, divided by 10)
    weight_importance: float = attrs.field(default=1.0, validator=number(minimum=0))
    #: weight of relevance (the fused RRF score divided by the best fused score)
    weight_relevance: float = attrs.field(default=1.0, validator=number(minimum=0))
    #: recency multiplier per hour since the last access (1 = recency never fades)
    recency_decay: float = attrs.field(default=DEFAULT_RECENCY_DECAY, validator=number(maximum=1, above=0))
    #: reorder the scored candidates with ``models.reranker`` when the recipe has one
    rerank: bool = attrs.field(default=True, validator=boolean)
    #: add ``related``: chunks one graph hop away from the results' entities
    related: bool = attrs.field(default=True, validator=boolean)
    #: how many related chunks at most; default ``top_k``
    related_top_k: int | None = attrs.field(
        default=None, validator=result_count(optional=True), metadata={"default_doc": "top_k"}
    )
    #: record that the returned chunks were accessed now (their recency goes back to 1); off in benchmarks
    update_access: bool = attrs.field(default=True, validator=boolean)
    #: keep only chunks of documents with at least one of these ``tags``
    tags: tuple[str, ...] | None = attrs.field(default=None, converter=_tags)

    def __attrs_post_init__(self) -> None:
        _not_all_zero(self)

    def weights(self) -> dict[str, float]:
        return {
            "weight_recency": float(self.weight_recency),
            "weight_importance": float(self.weight_importance),
            "weight_relevance": float(self.weight_relevance),
        }
