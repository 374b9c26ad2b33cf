"""The console's home: what this knowledge base is, how big, its last build, and which modes run (and why not).

Everything is counted over what the caller may read: documents and chunks of its readable documents;
entities from the graph only when it may read every document (a restricted caller is told the graph's
size only as the facts its documents support, when the store can say so cheaply); a build issue about a
document it may not read is left out.
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


def _issue(issue: Any) -> dict[str, Any]:
    return {"code": issue.code, "severity": issue.severity, "message": issue.message, "step": issue.step,
            "subject": {"type": issue.subject.type, "id": issue.subject.id}}


def last_build(kb: Any, scope: AccessScope) -> dict[str, Any] | None:
    run = kb.run_record.last_run
    if run is None:
        return None
    issues = [
        _issue(issue)
        for step in run.get("steps", {}).values()
        for issue in _step_issues(step)
        if issue.subject.type != "document" or scope.allows(issue.subject.id)
    ]
    return {
        "id": run.get("id"), "status": run.get("status"), "started": run.get("started"), "finished": run.get("finished"),
        "documents": len([d for d in run.get("document_ids", []) if scope.allows(d)]),
        "issues": issues[:MAX_ISSUES], "issue_count": len(issues),
    }


def _step_issues(step: dict[str, Any]) -> list[Any]:
    from heta_framework.contracts.record import issue_from_dict

    return [issue_from_dict(item) for item in step.get("issues", [])]


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
