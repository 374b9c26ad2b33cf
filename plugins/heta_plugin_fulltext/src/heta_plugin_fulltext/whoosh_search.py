"""The Whoosh schema and the search that this process and its helper processes (``search_processes``)
both run, so a helper's hits are exactly this process's."""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Collection, Sequence
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


#: a filter group with more alternatives than this (a caller's readable documents) is matched once per searcher
#: and kept as the set of documents it selects: an OR of a thousand terms cost ~100 ms per query at 10k chunks
LARGE_GROUP = 32
#: searcher -> (groups -> the documents they select); a searcher reads one commit, so its sets stay right, and
#: they go with it (weak keys) when a commit replaces it
_SELECTED: weakref.WeakKeyDictionary[Any, OrderedDict[tuple[frozenset[str], ...], set[int]]] = weakref.WeakKeyDictionary()
_SELECTED_KEPT = 8
_SELECTED_LOCK = threading.Lock()


def search_rows(searcher: Any, terms: Sequence[str], groups: Sequence[Collection[str]], top_k: int) -> list[HitRow]:
    """The best ``top_k`` chunks holding any of ``terms`` and passing every filter group, as plain rows."""
    query = q.Or([q.Term("body", term) for term in terms])
    return [
        (fields["chunk_id"], fields["text"], fields["record"], float(hit.score))
        for hit in searcher.search(query, limit=top_k, filter=_restriction(searcher, groups))
        for fields in [hit.fields()]
    ]


def _restriction_query(groups: Sequence[Collection[str]]) -> Any:
    return q.And([q.Or([q.Term("filters", term) for term in sorted(group)]) for group in groups])


def _restriction(searcher: Any, groups: Sequence[Collection[str]]) -> Any:
    """The filter for ``groups``: a query, or for large groups the documents they select on this searcher."""
    if not groups:
        return None
    if all(len(group) <= LARGE_GROUP for group in groups):
        return _restriction_query(groups)
    # looked up before anything is built: a scope's group is the same frozenset every query (hash kept)
    key = tuple(group if isinstance(group, frozenset) else frozenset(group) for group in groups)
    with _SELECTED_LOCK:
        kept = _SELECTED.setdefault(searcher, OrderedDict())
        selected = kept.get(key)
        if selected is not None:
            kept.move_to_end(key)
            return selected
    selected = set(searcher.docs_for_query(_restriction_query(groups)))
    with _SELECTED_LOCK:
        kept[key] = selected
        while len(kept) > _SELECTED_KEPT:
            kept.popitem(last=False)
    return selected
