"""The options of ``lean_rag_query``: which level is searched, and its retrieval budgets."""

from __future__ import annotations

import attrs
from heta_framework.common.validators import result_count, whole_number

BASE_LEVEL, AGGREGATES, ALL_LEVELS = 0, 1, 2


@attrs.frozen
class LeanRagOptions:
    """``lean_rag_query``: nodes nearest the query, their chains of parents, the relations between them."""

    #: which nodes the query is matched against: 0 base entities, 1 aggregates (every level), 2 both (LeanRAG's default)
    level_mode: int = attrs.field(default=ALL_LEVELS, validator=whole_number(0, 2))
    #: nodes taken from the vector search; their chains of parents are followed up to where they meet
    #: (LeanRAG's ``top_k``)
    entity_top_k: int = attrs.field(default=10, validator=result_count())
    #: relations along the reasoning paths kept at most, best first
    max_relations: int = attrs.field(default=10, validator=result_count(0))
    #: evidence chunks attached per result, most relevant to the query first
    max_evidence: int = attrs.field(default=3, validator=result_count(0))
    #: chunks in the assembled context (``metadata["context"]``), those supporting several matched nodes first
    #: (LeanRAG's ``text_unit_k``)
    text_unit_k: int = attrs.field(default=5, validator=result_count(0))
