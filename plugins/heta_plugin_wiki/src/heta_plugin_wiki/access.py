"""Who may read what, for what this plugin reads outside a store's filtered search (a page, a document, graph facts).

Two rules, the same a store applies: the caller's scope allows the document, and so does the request's
``document_id`` filter (which the knowledge base has already narrowed to the scope).
"""

from __future__ import annotations

from collections.abc import Iterable

from heta_framework.kb.search import QueryRequest


def readable(request: QueryRequest, document_id: str | None) -> bool:
    if document_id is None:
        return False
    if request.access is not None and not request.access.allows(document_id):
        return False
    wanted = request.filters.get("document_id")
    if wanted is None:
        return True
    if isinstance(wanted, (set, frozenset)):
        return document_id in wanted
    if isinstance(wanted, (list, tuple)):
        return document_id in wanted
    return bool(document_id == wanted)


def all_readable(request: QueryRequest, document_ids: Iterable[str]) -> bool:
    ids = list(document_ids)
    return bool(ids) and all(readable(request, d) for d in ids)
