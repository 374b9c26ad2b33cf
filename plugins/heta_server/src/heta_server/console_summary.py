"""The console's home: what this knowledge base is, how big, its last build, and which modes run (and why not).

Everything is counted over what the caller may read: documents and chunks of its readable documents;
entities from the graph only when it may read every document (a restricted caller is told the graph's
size only as the facts its documents support, when the store can say so cheaply); a caller who may not
read every document sees only the build issues about documents it may read.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from heta_framework.cli.querying import mode_rows
from heta_framework.contracts.access import AccessScope
from heta_framework.kb.knowledge_base import DEFAULT_MODE_ORDER

from heta_server.console_documents import ChunkCounts
from heta_server.console_graph import GRAPH_TABLES

#: the last build's issues shown on the home page (the rest: ``heta build`` reports, or the run record)
MAX_ISSUES = 50


def default_mode(kb: Any) -> str | None:
    """The mode ``POST /query`` runs without one: the first available of ``DEFAULT_MODE_ORDER`` (as ``kb.query``)."""
    available = set(kb.available_queries)
    return next((mode for mode in DEFAULT_MODE_ORDER if mode in available), None)


def _entities(kb: Any, scope: AccessScope, readable: list[str]) -> int | None:
    asset = next((a for a in kb.search_assets if a.kind == GRAPH_TABLES), None)
    if asset is None or not kb.has_component(asset.store):
        return None
    graph = kb.get_component(asset.store)
    if not scope.restricted:
        return int(graph.counts().get("entities", 0))
    if not hasattr(graph, "facts_of_documents") or not readable:
        return None if readable else 0
    entities, _ = graph.facts_of_documents(readable)
    return len(entities)


def _issue(item: dict[str, Any]) -> dict[str, Any]:
    """A run record's issue (``issue_to_dict``) as the page shows it."""
    subject = item.get("subject") or {}
    return {"code": item.get("code"), "severity": item.get("severity"), "message": item.get("message"), "step": item.get("step"),
            "subject": {"type": subject.get("type"), "id": subject.get("id")}}


def last_build(kb: Any, scope: AccessScope) -> dict[str, Any] | None:
    run = kb.run_record.last_run
    if run is None:
        return None
    issues = [_issue(item) for step in run.get("steps", {}).values() for item in step.get("issues", [])]
    if scope.restricted:
        # an issue about anything but a readable document (a chunk, a group of merged entities, ...) may name
        # or quote what the caller may not read: a restricted caller sees the ones about its documents
        issues = [i for i in issues if i["subject"]["type"] == "document" and scope.allows(i["subject"]["id"])]
    return {
        "id": run.get("id"), "status": run.get("status"), "started": run.get("started"), "finished": run.get("finished"),
        "documents": len([d for d in run.get("document_ids", []) if scope.allows(d)]),
        "issues": issues[:MAX_ISSUES], "issue_count": len(issues),
    }


def kb_summary(kb: Any, name: str, scope: AccessScope, records: list[Any], counts: ChunkCounts, *, may_write: bool) -> dict[str, Any]:
    states: dict[str, int] = {}
    for record in records:
        states[record.state] = states.get(record.state, 0) + 1
    return {
        "name": name,
        "folder": PurePath(str(kb.path)).name,  # its folder's name, never the server's absolute path
        "documents": {"total": len(records), **states},
        "chunks": counts.total(kb, records),
        "entities": _entities(kb, scope, [r.id for r in records]),
        "last_build": last_build(kb, scope),
        "runs": len(kb.run_record.runs),
        "modes": mode_rows(kb),
        "default_mode": default_mode(kb),
        "answers": kb.has_component("models.language"),
        "may_write": may_write,
    }
