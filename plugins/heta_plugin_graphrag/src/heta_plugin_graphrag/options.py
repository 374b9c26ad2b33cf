"""The options of the two GraphRAG modes; defaults follow GraphRAG's search configuration where it has one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from heta_framework.common.validators import number, result_count, whole_number
from heta_framework.kb.query_options import parse_options


def _level(instance: Any, attribute: attrs.Attribute, value: int | None) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"{attribute.name} is a community level (0 is the coarsest) or null for every level, got {value!r}")


@attrs.frozen
class GlobalSearchOptions:
    """``graphrag_global_search``: map (rate every report), reduce (the best within a token budget), answer."""

    #: community level searched (0 coarsest); None: every level
    level: int | None = attrs.field(default=None, validator=_level)
    #: reports kept after the map step at most
    report_top_k: int = attrs.field(default=10, validator=result_count())
    #: tokens of report text the reduce step keeps at most (GraphRAG's ``max_context_tokens``)
    max_report_tokens: int = attrs.field(default=8000, validator=whole_number(1))
    #: supporting chunks returned per kept report at most
    chunks_per_report: int = attrs.field(default=3, validator=result_count())
    #: reports rated below this (0-10) are not used
    min_rating: float = attrs.field(default=0.0, validator=number(minimum=0, maximum=10))
    #: False: no reduce answer by the language model even when the recipe has one
    #: (core's common ``answer`` option is another thing: a grounded answer written from the results)
    llm_answer: bool = True

    @classmethod
    def from_request(cls, options: Mapping[str, Any], mode: str) -> GlobalSearchOptions:
        return parse_options(cls, options, mode=mode)


@attrs.frozen
class LocalSearchOptions:
    """``graphrag_local_search``: entities near the query, their relations, communities' reports and text units."""

    #: entities taken from the entity vector index (GraphRAG's ``top_k_entities``)
    top_k_entities: int = attrs.field(default=10, validator=result_count())
    #: relations kept (GraphRAG's ``top_k_relationships``)
    top_k_relationships: int = attrs.field(default=10, validator=result_count(0))
    #: tokens of the whole context at most (GraphRAG's ``max_context_tokens``)
    max_tokens: int = attrs.field(default=12000, validator=whole_number(1))
    #: share of the budget for community reports (GraphRAG's ``community_prop``)
    community_prop: float = attrs.field(default=0.1, validator=number(minimum=0, maximum=1))
    #: share of the budget for text units (GraphRAG's ``text_unit_prop``); entities and relations get the rest
    text_unit_prop: float = attrs.field(default=0.5, validator=number(minimum=0, maximum=1))

    def __attrs_post_init__(self) -> None:
        if self.community_prop + self.text_unit_prop > 1:
            raise ValueError("community_prop + text_unit_prop must be at most 1")

    @classmethod
    def from_request(cls, options: Mapping[str, Any], mode: str) -> LocalSearchOptions:
        return parse_options(cls, options, mode=mode)
