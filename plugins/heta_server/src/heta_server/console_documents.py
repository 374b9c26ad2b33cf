"""The console's documents: the catalog a page at a time with each document's chunk count and build issues,
and one document with its chunks and where each came from.

Only documents the caller may read are listed or shown (``Call.readable`` / ``Call.document``). Chunks are
read as ``heta documents show`` reads them (``heta_framework.kb.documents.document_chunks``); their counts
are kept per document version, so the catalog and the home page do not read every chunk file each time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import PurePath
from typing import Any

import attrs
from heta_framework.contracts.access import may_read
from heta_framework.contracts.documents import document_chunks
from heta_framework.contracts.provenance import describe_location
from heta_framework.runtime.document_status import issues_by_document, reader_state

MAX_PAGE = 200


class ChunkCounts:
    """How many chunks each document version has (keyed by knowledge base, id, content hash and state), read
    once: at 10,000 documents the first home page reads every chunk file (about 30 µs each), later ones none."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, str, str, str], int] = {}
        self._lock = threading.Lock()

    def of(self, kb: Any, record: Any) -> int:
        key = (str(kb.path), record.id, record.content_hash, record.state)
        with self._lock:
            known = self._counts.get(key)
        if known is None:
            known = len(document_chunks(kb.objects, record.id))
            with self._lock:
                self._counts[key] = known
        return known

    def total(self, kb: Any, records: Sequence[Any]) -> int:
        return sum(self.of(kb, record) for record in records)


def document_issues(kb: Any) -> dict[str, list[dict[str, Any]]]:
    """document id -> the build issues about it (code, severity, message, step) from the latest run that had any
    (``heta_framework.runtime.document_status``: what ``heta documents`` shows too)."""
    return {
        document: [{"code": i["code"], "severity": i.get("severity"), "message": i.get("message"), "step": i.get("step")} for i in issues]
        for document, issues in issues_by_document(kb.run_record.runs).items()
    }


def _name(record: Any) -> str:
    return str(record.name or PurePath(record.source).name or record.id)


def catalog_row(record: Any, chunks: int, issues: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": record.id, "name": _name(record), "state": reader_state(record.state, chunks, [i["code"] for i in issues]),
        "size": record.size, "chunks": chunks,
        "added": record.added, "updated": record.updated, "issues": issues,
    }


@attrs.frozen
class RemovedDocument:
    """A document ``heta remove`` (or the API) took out: ``kb.removed_documents`` keeps its source and when."""

    id: str
    source: str
    removed: float | None

    @property
    def name(self) -> str:
        return PurePath(self.source.replace("\\", "/")).name or self.id


def removed_documents(kb: Any, principals: Iterable[str]) -> list[RemovedDocument]:
    """The removed documents ``principals`` could read when they were removed. The access list a document had
    is kept with its removal; an entry without one (removed before that was kept) is listed to nobody."""
    callers = frozenset(principals)
    found = []
    for doc_id, entry in kb.removed_documents.items():
        if "access" not in entry:
            continue
        access = entry["access"]
        readers = kb.recipe.access.readers(None if access is None else tuple(access))
        if may_read(readers, callers):
            found.append(RemovedDocument(doc_id, str(entry.get("source") or ""), entry.get("removed")))
    return found


def _removed_row(document: RemovedDocument) -> dict[str, Any]:
    return {"id": document.id, "name": document.name, "state": "removed", "size": None, "chunks": 0, "added": None,
            "updated": document.removed, "issues": []}


def catalog_page(kb: Any, records: Sequence[Any], counts: ChunkCounts, *, text: str = "", offset: int = 0, limit: int = 50,
                 removed: Sequence[RemovedDocument] = ()) -> dict[str, Any]:
    """One page of the readable catalog, by name; ``text`` keeps the documents whose name or id contains it.

    ``removed``: removed documents to list too (state ``removed``, ``updated`` when), after the others; the
    caller decides who may see them (their access lists went with them)."""
    wanted = text.strip().lower()
    kept = {r.id for r in records}
    chosen = [r for r in [*records, *(d for d in removed if d.id not in kept)]
              if not wanted or wanted in _name(r).lower() or wanted in r.id.lower()]
    chosen.sort(key=lambda r: (isinstance(r, RemovedDocument), _name(r).lower(), r.id))
    limit = max(1, min(limit, MAX_PAGE))
    page = chosen[offset:offset + limit]
    issues = document_issues(kb)
    following = offset + limit
    return {
        "documents": [_removed_row(r) if isinstance(r, RemovedDocument) else catalog_row(r, counts.of(kb, r), issues.get(r.id, []))
                      for r in page],
        "total": len(chosen), "offset": offset, "limit": limit,
        "next_offset": following if following < len(chosen) else None,
    }


def document_view(kb: Any, record: Any, *, offset: int = 0, limit: int = 50, chunk: str | None = None) -> dict[str, Any]:
    """A readable document: its catalog entry, issues, and one page of its chunks with their locations
    (the page holding ``chunk`` when it is one of them: a search result's link opens where it points)."""
    chunks = document_chunks(kb.objects, record.id)
    limit = max(1, min(limit, MAX_PAGE))
    position = next((i for i, c in enumerate(chunks) if c.id == chunk), None) if chunk else None
    if position is not None:
        offset = position - position % limit
    page = chunks[offset:offset + limit]
    following = offset + limit
    return {
        **catalog_row(record, len(chunks), document_issues(kb).get(record.id, [])),
        "source": record.source,
        "metadata": dict(record.metadata),
        "readers": list(kb.readers(record.id)),
        "chunk_texts": [
            {"id": c.id, "index": c.index, "start": c.start, "end": c.end, "page": c.page, "text": c.text,
             "location": describe_location({**c.provenance(), "name": _name(record)})}
            for c in page
        ],
        "offset": offset, "limit": limit, "next_offset": following if following < len(chunks) else None,
    }
