"""The Whoosh schema and the search that this process and its helper processes (``search_processes``)
both run, so a helper's hits are exactly this process's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from whoosh import query as q
from whoosh.analysis import RegexTokenizer
from whoosh.fields import ID, STORED, TEXT, FieldType, Schema
from whoosh.formats import Existence

from heta_plugin_fulltext.records import TERM_SEPARATOR
from heta_plugin_fulltext.whoosh_analysis import whoosh_analyzer

#: one hit as it crosses the pipe: chunk id, text, record (JSON string), score
HitRow = tuple[str, str, str, float]


def whoosh_schema(analyzer: str) -> Schema:
    return Schema(
        chunk_id=ID(stored=True, unique=True),
        document_id=ID(),
        # exact provenance facts, one token each (values may hold spaces, so split on the separator only)
        filters=FieldType(Existence(), analyzer=RegexTokenizer(f"[^{TERM_SEPARATOR}]+")),
        # no positions: queries are ORs of terms, never phrases
        body=TEXT(analyzer=whoosh_analyzer(analyzer), phrase=False),
        text=STORED(),
        record=STORED(),
    )


def search_rows(searcher: Any, terms: Sequence[str], groups: Sequence[Sequence[str]], top_k: int) -> list[HitRow]:
    """The best ``top_k`` chunks holding any of ``terms`` and passing every filter group, as plain rows."""
    query = q.Or([q.Term("body", term) for term in terms])
    restrict = q.And([q.Or([q.Term("filters", term) for term in group]) for group in groups]) if groups else None
    return [
        (fields["chunk_id"], fields["text"], fields["record"], float(hit.score))
        for hit in searcher.search(query, limit=top_k, filter=restrict)
        for fields in [hit.fields()]
    ]
