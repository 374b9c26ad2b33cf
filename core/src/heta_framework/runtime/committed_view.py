"""What a query may show while a build is in progress: only documents the last committed build holds.

Each store commits on its own as the steps run, so while a build adds documents a new document is
already in the full-text index but not yet in the vector index or the graph. A query in that window
(from another process) would see a knowledge base that never existed. The run record says which
documents the unfinished run is adding for the first time; while its writer holds the lock, their
hits are held back. Documents built before (a changed or rebuilt document) stay visible: they exist
in the committed state, old or new text. A run whose writer died is not held back: nobody will
finish it until the next ``heta build`` resumes it, and what its steps committed is searchable
meanwhile (each mode only once its step has published its assets).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from heta_framework.contracts.access import AccessScope
from heta_framework.contracts.search import QueryResponse, QueryResult, query_issue

log = logging.getLogger(__name__)

HIDDEN_CODE = "documents_being_built"


def documents_being_built(runs: Sequence[Mapping[str, Any]]) -> frozenset[str]:
    """Ids the last run is adding and no finished run ever built (empty when the last run is done)."""
    if not runs or runs[-1].get("status") == "done":
        return frozenset()
    adding = set(runs[-1].get("document_ids", ()))
    for run in runs[:-1]:
        if run.get("status") == "done":
            adding.difference_update(run.get("document_ids", ()))
    return frozenset(adding)


def hide_documents(response: QueryResponse, hidden: frozenset[str]) -> QueryResponse:
    """``response`` without hits (and graph evidence) from ``hidden`` documents, and an issue saying how many."""
    if not hidden:
        return response
    kept: list[QueryResult] = []
    dropped = 0
    for result in response.results:
        visible = _visible(result, hidden.__contains__)
        if visible is None:
            dropped += 1
        else:
            kept.append(visible)
    if not dropped:
        return response
    issue = query_issue(
        HIDDEN_CODE,
        f"{dropped} result(s) from documents a build in progress is adding were held back; they appear once it finishes.",
        "hid_results",
        hidden_results=dropped,
    )
    metadata = {**response.metadata, "issues": [*response.metadata.get("issues", ()), issue]}
    return attrs.evolve(response, results=tuple(kept), metadata=metadata)


def keep_readable(response: QueryResponse, scope: AccessScope | None) -> QueryResponse:
    """``response`` with nothing from documents outside ``scope``: the check behind every engine's own filtering.

    Engines filter in their stores before ranking (so top-k stays full); this only catches an engine that
    did not, and drops what it let through, derived results resting on an unreadable document included
    (``metadata["document_ids"]``), with any answer written from them. It says nothing in the response
    (that would tell the caller such documents exist); it logs a warning for the engine's author.
    """
    if scope is None or not scope.restricted:
        return response
    kept: list[QueryResult] = []
    for result in response.results:
        readable = _visible(result, lambda doc_id: not scope.allows(doc_id))
        if readable is not None and scope.allows_all(result.metadata.get("document_ids", ())):
            kept.append(readable)
    if kept == list(response.results):
        return response
    log.warning("an engine returned %d result(s) outside the caller's access; they were dropped", len(response.results) - len(kept))
    ids = {result.id for result in kept}
    return attrs.evolve(
        response, results=tuple(kept), answer=None, citations=tuple(c for c in response.citations if c.result_id in ids),
    )


def _visible(result: QueryResult, hidden: Callable[[str], bool]) -> QueryResult | None:
    if result.document_id is not None and hidden(result.document_id):
        return None
    if not result.evidence:
        return result
    evidence = tuple(chunk for chunk in result.evidence if not (chunk.document_id is not None and hidden(chunk.document_id)))
    if not evidence:  # a fact only the new documents support
        return None
    return result if len(evidence) == len(result.evidence) else attrs.evolve(result, evidence=evidence)
