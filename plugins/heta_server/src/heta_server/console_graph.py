"""The console's graph explorer: one entity's neighbourhood a page at a time, and the evidence of a fact.

It reads the knowledge base's graph store (the ``GraphStore`` contract, core's ``contracts/graph_store.py``)
through the four reads every backend has (``get_entities``, ``relations_touching``, ``evidence``,
``get_chunks``), never the whole graph: a neighbourhood is one entity's relations, sorted by how much
readable evidence supports them, cut into pages.

A caller sees graph facts by the rule every graph mode applies (heta-plugin-graph's ``visibility.py``,
docs/security.md): a fact exists for it only when some evidence row comes from a document it may read;
a fact some of whose evidence it may not read shows the description that readable evidence gives; evidence
from other documents is never listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from heta_framework.contracts.access import AccessScope
from heta_framework.contracts.provenance import describe_location

from heta_server.errors import ApiError

#: the asset a graph build publishes; its ``store`` names the component holding the graph tables
GRAPH_TABLES = "graph_tables"
#: an evidence row: (chunk id, document id, what that chunk said about the fact)
EvidenceRow = tuple[str, str, str]


def graph_store(kb: Any) -> Any:
    """The graph store the knowledge base built, or 404 ``NoGraph`` when it has none."""
    asset = next((a for a in kb.search_assets if a.kind == GRAPH_TABLES), None)
    if asset is None or not kb.has_component(asset.store):
        raise ApiError(404, "NoGraph", "This knowledge base has no graph: add the graph steps to the recipe (heta-plugin-graph) and build.")
    return kb.get_component(asset.store)


def _readable(rows: Iterable[EvidenceRow], scope: AccessScope) -> list[EvidenceRow]:
    return [row for row in rows if scope.allows(row[1])]


def _description(description: str, rows: Sequence[EvidenceRow], readable: Sequence[EvidenceRow]) -> str:
    """The stored description when the caller may read all of its evidence, else the longest readable one."""
    if len(readable) == len(rows):
        return description
    ranked = sorted({row[2] for row in readable if row[2]}, key=lambda d: (-len(d), d))
    return ranked[0] if ranked else ""


def _entity(entity: Any, rows: Sequence[EvidenceRow], readable: Sequence[EvidenceRow]) -> dict[str, Any]:
    return {
        "id": entity.id, "name": entity.name, "type": entity.type,
        "description": _description(entity.description, rows, readable), "evidence": len(readable),
    }


def _relation(relation: Any, rows: Sequence[EvidenceRow], readable: Sequence[EvidenceRow]) -> dict[str, Any]:
    return {
        "id": relation.id, "source": relation.source_id, "target": relation.target_id, "type": relation.type,
        "name": relation.name, "description": _description(relation.description, rows, readable), "evidence": len(readable),
    }


def unknown_fact(kind: str, fact_id: str) -> ApiError:
    # the same answer for a fact that does not exist and one the caller may not see
    return ApiError(404, "UnknownFact", f"No {kind} {fact_id[:80]!r} in this knowledge base's graph.")


def entity_view(graph: Any, entity_id: str, scope: AccessScope) -> dict[str, Any]:
    """One entity as the caller may see it, or 404 ``UnknownFact``."""
    entity = graph.get_entities([entity_id]).get(entity_id)
    rows = graph.evidence("entity", [entity_id]).get(entity_id, []) if entity is not None else []
    readable = _readable(rows, scope)
    if entity is None or not readable:
        raise unknown_fact("entity", entity_id)
    return _entity(entity, rows, readable)


def neighbourhood(graph: Any, entity_id: str, scope: AccessScope, *, offset: int = 0, limit: int = 25) -> dict[str, Any]:
    """The entity, one page of its visible relations (most readable evidence first, then by id) and the
    entities at their other ends."""
    centre = entity_view(graph, entity_id, scope)
    relations = sorted(graph.relations_touching([entity_id]), key=lambda r: r.id)
    evidence = graph.evidence("relation", [r.id for r in relations]) if relations else {}
    visible = []
    for relation in relations:
        rows = evidence.get(relation.id, [])
        readable = _readable(rows, scope)
        if readable:
            visible.append((relation, rows, readable))
    visible.sort(key=lambda item: (-len(item[2]), item[0].id))
    page = visible[offset:offset + limit]
    others = sorted({r.target_id if r.source_id == entity_id else r.source_id for r, _, _ in page} - {entity_id})
    stored = graph.get_entities(others) if others else {}
    other_rows = graph.evidence("entity", list(stored)) if stored else {}
    entities = []
    for other_id in others:
        entity = stored.get(other_id)
        rows = other_rows.get(other_id, [])
        readable = _readable(rows, scope)
        # a relation the caller may read implies readable evidence for both ends in practice; an end
        # without any is left out, and so is the relation to it
        if entity is not None and readable:
            entities.append(_entity(entity, rows, readable))
    shown = {e["id"] for e in entities} | {entity_id}
    page_relations = [_relation(r, rows, readable) for r, rows, readable in page if r.source_id in shown and r.target_id in shown]
    following = offset + limit
    return {
        "entity": centre,
        "entities": entities,
        "relations": page_relations,
        "total": len(visible),
        "offset": offset,
        "limit": limit,
        "next_offset": following if following < len(visible) else None,
    }


def fact_evidence(graph: Any, kind: str, fact_id: str, scope: AccessScope, names: dict[str, str], *, limit: int = 20) -> dict[str, Any]:
    """The chunks a fact rests on that the caller may read (at most ``limit``), each with where it came from.

    ``names``: document id -> its name, for the location line."""
    if kind not in ("entity", "relation"):
        raise ApiError(422, "InvalidRequest", "kind must be entity or relation.")
    facts = graph.get_entities([fact_id]) if kind == "entity" else graph.get_relations([fact_id])
    rows = graph.evidence(kind, [fact_id]).get(fact_id, []) if fact_id in facts else []
    readable = _readable(rows, scope)
    if not readable:
        raise unknown_fact(kind, fact_id)
    shown = readable[:limit]
    chunks = graph.get_chunks([row[0] for row in shown])
    items = []
    for chunk_id, document_id, said in shown:
        chunk = chunks.get(chunk_id)
        metadata = {**(dict(chunk.metadata) if chunk is not None else {}), "document_id": document_id}
        metadata.setdefault("name", names.get(document_id, document_id))
        items.append({
            "chunk_id": chunk_id, "document_id": document_id, "said": said,
            "text": chunk.text if chunk is not None else "", "location": describe_location(metadata),
        })
    fact = facts[fact_id]
    view = _entity(fact, rows, readable) if kind == "entity" else _relation(fact, rows, readable)
    return {"kind": kind, "fact": view, "evidence": items, "total": len(readable)}


def document_entities(graph: Any, document_id: str, scope: AccessScope, *, limit: int = 50) -> list[dict[str, Any]]:
    """Entities with evidence in one (readable) document, for the document view's links into the graph;
    [] when the store cannot tell cheaply (``facts_of_documents`` is optional)."""
    if not scope.allows(document_id) or not hasattr(graph, "facts_of_documents"):
        return []
    entity_ids, _ = graph.facts_of_documents([document_id])
    chosen = sorted(entity_ids)[:limit]
    stored = graph.get_entities(chosen) if chosen else {}
    return sorted(({"id": e.id, "name": e.name, "type": e.type} for e in stored.values()), key=lambda e: (e["name"].lower(), e["id"]))
