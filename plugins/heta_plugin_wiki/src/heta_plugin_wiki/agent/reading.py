"""Reading a document's chunks in order, as SplitDocuments stored them (the reading tools check ``access.readable`` first)."""

from __future__ import annotations

from typing import Any

from heta_framework.kb.documents import Chunk, chunk_from_dict, document_key

CHUNKS_PREFIX = "chunks/"  # where SplitDocuments keeps a document's chunks (one JSON list per document, in order)


def document_chunks(objects: Any, document_id: str) -> list[Chunk]:
    """The document's chunks in order, or ``[]`` when it has none (never built, or removed)."""
    key = f"{CHUNKS_PREFIX}{document_key(document_id)}.json"
    if not objects.exists(key):
        return []
    return [chunk_from_dict(data) for data in objects.get_json(key)]
