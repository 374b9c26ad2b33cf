"""Reading what the caller may read: a document's chunks, and the check every reading tool makes first.

A nested search already runs under the caller's scope (``context.query`` passes the access scope and the
narrowed ``document_id`` filter on). Tools that read stores directly (a document, a graph neighbourhood) ask
``readable`` first, with the same two rules: the scope allows the document, and so does the request's filter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from heta_framework.kb.documents import Chunk, chunk_from_dict, document_key
from heta_framework.kb.search import QueryRequest

CHUNKS_PREFIX = "chunks/"  # where SplitDocuments keeps a document's chunks (one JSON list per document, in order)


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


def document_chunks(objects: Any, document_id: str) -> list[Chunk]:
    """The document's chunks in order, or ``[]`` when it has none (never built, or removed)."""
    key = f"{CHUNKS_PREFIX}{document_key(document_id)}.json"
    if not objects.exists(key):
        return []
    return [chunk_from_dict(data) for data in objects.get_json(key)]
