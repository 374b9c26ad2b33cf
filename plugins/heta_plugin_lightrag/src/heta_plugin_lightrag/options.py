"""The options of the four LightRAG modes: LightRAG's retrieval sizes and token budgets, with its defaults.

LightRAG's ``top_k`` (entities retrieved in local mode, relations in global
mode) is ``graph_top_k`` here, because ``top_k`` already means the number of
results ``kb.query`` returns. The other names are LightRAG's own. Defaults are
those of LightRAG 1.4 (``lightrag/constants.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from heta_framework.common.validators import number, result_count, whole_number
from heta_framework.kb.query_options import parse_options

DEFAULT_GRAPH_TOP_K = 40
DEFAULT_CHUNK_TOP_K = 20
DEFAULT_MAX_ENTITY_TOKENS = 6000
DEFAULT_MAX_RELATION_TOKENS = 8000
DEFAULT_MAX_TOTAL_TOKENS = 30000
DEFAULT_COSINE_THRESHOLD = 0.2
DEFAULT_RELATED_CHUNK_NUMBER = 5


@attrs.frozen
class LightRagOptions:
    """``lightrag_local``, ``lightrag_global`` and ``lightrag_hybrid`` options; checked before the mode runs."""

    #: entities (local) or relations (global) taken from the vector index (LightRAG's ``top_k``)
    graph_top_k: int = attrs.field(default=DEFAULT_GRAPH_TOP_K, validator=result_count())
    #: text chunks kept in the context at most
    chunk_top_k: int = attrs.field(default=DEFAULT_CHUNK_TOP_K, validator=result_count(0))
    #: tokens of entity text (name, type, description) in the context at most
    max_entity_tokens: int = attrs.field(default=DEFAULT_MAX_ENTITY_TOKENS, validator=whole_number(0))
    #: tokens of relation text in the context at most
    max_relation_tokens: int = attrs.field(default=DEFAULT_MAX_RELATION_TOKENS, validator=whole_number(0))
    #: tokens of the whole context (query, entities, relations, chunks) at most; chunks get what is left
    max_total_tokens: int = attrs.field(default=DEFAULT_MAX_TOTAL_TOKENS, validator=whole_number(1))
    #: vector hits less similar than this are not used
    cosine_threshold: float = attrs.field(default=DEFAULT_COSINE_THRESHOLD, validator=number(minimum=-1, maximum=1))
    #: evidence chunks taken per entity or relation at most
    related_chunk_number: int = attrs.field(default=DEFAULT_RELATED_CHUNK_NUMBER, validator=result_count())

    @classmethod
    def from_request(cls, options: Mapping[str, Any], mode: str) -> LightRagOptions:
        return parse_options(cls, options, mode=mode)


@attrs.frozen
class LightRagMixOptions(LightRagOptions):
    """``lightrag_mix`` options: the hybrid ones, plus how the vector chunks are fused in."""

    #: the RRF smoothing constant of the graph context and ``vector_search``'s chunks
    rrf_k: float = attrs.field(default=60.0, validator=number(minimum=0))
