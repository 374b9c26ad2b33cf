"""The options of the five hi_rag modes (one class: they share their retrieval); defaults follow HiRAG's where it has one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from heta_framework.common.validators import OptionValueError, boolean, result_count, whole_number
from heta_framework.kb.query_options import parse_options


def _short_text(instance: Any, attribute: attrs.Attribute, value: Any) -> None:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise OptionValueError(attribute.name, f"{attribute.name} must be a non-empty text of at most 200 characters, got {value!r}")


@attrs.frozen
class HiRagOptions:
    """``hi_rag_query``, ``hi_rag_nobridge_query``, ``hi_rag_local_query``, ``hi_rag_global_query``, ``hi_rag_bridge_query``."""

    #: entities taken from the vector indexes, graph entities and summary entities together (HiRAG's ``top_k``)
    entity_top_k: int = attrs.field(default=20, validator=result_count())
    #: communities of this level and coarser are used (0 is the coarsest; HiRAG's ``level``)
    level: int = attrs.field(default=2, validator=whole_number(0, 100))
    #: only the best community (HiRAG's ``community_single_one``)
    community_single_one: bool = attrs.field(default=False, validator=boolean)
    #: tokens of source chunks at most (HiRAG's ``max_token_for_text_unit``)
    max_token_for_text_unit: int = attrs.field(default=20000, validator=whole_number(1))
    #: tokens of entities and relations at most (HiRAG's ``max_token_for_local_context``)
    max_token_for_local_context: int = attrs.field(default=20000, validator=whole_number(1))
    #: tokens of the reasoning path at most (HiRAG's ``max_token_for_bridge_knowledge``)
    max_token_for_bridge_knowledge: int = attrs.field(default=12500, validator=whole_number(1))
    #: tokens of community reports at most (HiRAG's ``max_token_for_community_report``)
    max_token_for_community_report: int = attrs.field(default=12500, validator=whole_number(1))
    #: False: no answer by the language model even when the recipe has one (core's common ``answer``
    #: option is another thing: a grounded answer written from the results)
    llm_answer: bool = attrs.field(default=True, validator=boolean)
    #: the kind of answer asked for (HiRAG's ``response_type``)
    response_type: str = attrs.field(default="Multiple Paragraphs", validator=_short_text)

    @classmethod
    def from_request(cls, options: Mapping[str, Any], mode: str) -> HiRagOptions:
        return parse_options(cls, options, mode=mode)
