"""What a document's catalog entry means to a reader: ``built`` with chunks, or ``skipped`` and why.

The catalog's own state is the pipeline's (``pending`` until a build ran every step on the
document, then ``built``). A file that produced no text at all (empty, binary, an
unsupported or unreadable type) is ``built`` too, since the pipeline is done with it, but
listing it beside real documents as ``built`` with 0 chunks hid the reason. Readers
(``heta documents``, the server's catalog) show it as ``skipped`` with the issue codes the
build reported for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

SKIPPED = "skipped"


def issues_by_document(runs: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Document id -> the issues (as stored: ``code``, ``severity``, ``message``, ``step``, ...) of the latest build
    run that reported any for it; older runs' are stale (the file may have changed since)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        in_run: dict[str, list[dict[str, Any]]] = {}
        for key, step in (("ingest", run.get("ingest") or {}), *run.get("steps", {}).items()):
            for issue in step.get("issues", []):
                subject = issue.get("subject") or {}
                if subject.get("type") == "document":
                    in_run.setdefault(subject.get("id", ""), []).append({"step": issue.get("step", key), **issue})
        found.update(in_run)
    return found


def issue_codes_by_document(runs: Iterable[Mapping[str, Any]]) -> dict[str, list[str]]:
    """Document id -> the distinct issue codes of ``issues_by_document``, in the order they were reported."""
    return {document: list(dict.fromkeys(issue["code"] for issue in issues)) for document, issues in issues_by_document(runs).items()}


def reader_state(state: str, chunks: int, issue_codes: Iterable[str]) -> str:
    """``skipped`` for a built document that gave no chunk and has an issue saying why; else the catalog state."""
    return SKIPPED if state == "built" and chunks == 0 and any(True for _ in issue_codes) else state
