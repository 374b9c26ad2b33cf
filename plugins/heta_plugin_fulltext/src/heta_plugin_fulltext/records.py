"""How a chunk is stored beside its index terms: JSON (never pickle), plus exact-match filter terms."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote

from heta_framework.kb.documents import Chunk

_SCALARS = (str, int, float, bool)


def chunk_record(chunk: Chunk) -> str:
    """Everything but the id and text, as a JSON string."""
    return json.dumps(
        {
            "document_id": chunk.document_id,
            "index": chunk.index,
            "start": chunk.start,
            "end": chunk.end,
            "source": chunk.source,
            "page": chunk.page,
            "metadata": dict(chunk.metadata),
        },
        ensure_ascii=False,
    )


def chunk_from_record(chunk_id: str, text: str, record: str) -> Chunk:
    return Chunk(id=chunk_id, text=text, **json.loads(record))


def filter_term(key: str, value: Any) -> str:
    """One exact ``key = value`` fact as a single token (no spaces), typed like JSON: ``2`` is not ``"2"``."""
    return quote(key, safe="") + "=" + quote(json.dumps(value, ensure_ascii=False, sort_keys=True), safe="")


def filter_terms(chunk: Chunk) -> Iterator[str]:
    """The filter terms of every provenance key of ``chunk``; list values give one term per element."""
    for key, value in chunk.provenance().items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if item is None or isinstance(item, _SCALARS):
                yield filter_term(key, item)


def filter_groups(filters: Mapping[str, Any] | None) -> list[list[str]]:
    """One list of alternative terms per filter key (all keys must match; any value of a list)."""
    groups = []
    for key, value in (filters or {}).items():
        values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
        groups.append([filter_term(str(key), item) for item in values])
    return groups
