"""The graph as it travels between steps: extracted facts, then deduplicated facts.

Extraction writes staging files (``graph/extract/run-<run>-<part>.json``, up to
``DOCUMENTS_PER_FILE`` documents each: one atomic write per file, not per
document) holding, per document and chunk, the entities and relations found. Dedup turns those
into a ``GraphDraft``: one record per distinct entity/relation, each carrying the
evidence (chunk, document, local description) that supports it. ``BuildGraph``
and ``MergeGraphIntoStore`` write a draft into the graph store.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from heta_plugin_graph.normalize import entity_id, normalize_name, normalize_type, relation_id

EXTRACT_PREFIX = "graph/extract/"
DRAFT_PREFIX = "graph/draft/"

#: co-occurrence has no direction; its endpoints are stored sorted so A–B and B–A are one relation
SYMMETRIC_TYPES = frozenset({"co_occurs_with"})


DOCUMENTS_PER_FILE = 500


def extraction_key(run_id: int, part: int) -> str:
    return f"{EXTRACT_PREFIX}run-{run_id}-{part:04d}.json"


def iter_extractions(objects: Any, keys: Iterable[str]) -> Iterator[dict[str, Any]]:
    """Every document's extraction (``{"document_id", "chunks": [...]}``) in the staging files ``keys``."""
    for key in keys:
        yield from objects.get_json(key)["documents"]


def forget_documents(objects: Any, document_ids: Iterable[str]) -> None:
    """Drop documents from every staging file (deleting a document deletes what was extracted from it)."""
    doomed = set(document_ids)
    for key in list(objects.keys(EXTRACT_PREFIX)):
        data = objects.get_json(key)
        kept = [d for d in data["documents"] if d["document_id"] not in doomed]
        if len(kept) != len(data["documents"]):
            objects.put_json(key, {**data, "documents": kept})


def draft_key(run_id: int, stage: str) -> str:
    return f"{DRAFT_PREFIX}run-{run_id}-{stage}.json"


@attrs.frozen
class Evidence:
    """One chunk supporting a fact, with what that chunk said about it."""

    chunk_id: str
    document_id: str
    description: str = ""


@attrs.frozen
class DraftEntity:
    id: str
    name: str
    type: str
    description: str = ""
    attributes: Mapping[str, Any] = attrs.field(factory=dict, converter=dict, eq=False, hash=False)
    evidence: tuple[Evidence, ...] = ()
    aliases: tuple[str, ...] = ()

    @property
    def name_key(self) -> str:
        return normalize_name(self.name)

    @property
    def embedding_text(self) -> str:
        return f"{self.name} ({self.type}): {self.description}" if self.description else f"{self.name} ({self.type})"


@attrs.frozen
class DraftRelation:
    id: str
    source_id: str
    target_id: str
    type: str
    name: str = ""
    description: str = ""
    evidence: tuple[Evidence, ...] = ()


@attrs.frozen
class GraphDraft:
    entities: tuple[DraftEntity, ...] = ()
    relations: tuple[DraftRelation, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GraphDraft:
        def evidence(items: Iterable[Mapping[str, Any]]) -> tuple[Evidence, ...]:
            return tuple(Evidence(**e) for e in items)

        return cls(
            entities=tuple(
                DraftEntity(**{**e, "evidence": evidence(e["evidence"]), "aliases": tuple(e.get("aliases", ()))})
                for e in data["entities"]
            ),
            relations=tuple(DraftRelation(**{**r, "evidence": evidence(r["evidence"])}) for r in data["relations"]),
        )

    def entity_ids(self) -> set[str]:
        return {e.id for e in self.entities}


def _merge_evidence(items: Iterable[Evidence]) -> tuple[Evidence, ...]:
    """One evidence per chunk; the longest local description wins (it says the most)."""
    best: dict[str, Evidence] = {}
    for item in items:
        current = best.get(item.chunk_id)
        if current is None or len(item.description) > len(current.description):
            best[item.chunk_id] = item
    return tuple(sorted(best.values(), key=lambda e: e.chunk_id))


def _best_description(evidence: Iterable[Evidence]) -> str:
    descriptions = sorted({e.description for e in evidence if e.description}, key=lambda d: (-len(d), d))
    return descriptions[0] if descriptions else ""


def draft_from_extractions(extractions: Iterable[Mapping[str, Any]]) -> GraphDraft:
    """Exact dedup: one entity per (normalised name, normalised type); relation endpoints resolved per chunk.

    A relation endpoint names an entity of the *same* chunk (the extractors
    guarantee it); relations whose endpoints are not found are dropped.
    """
    entity_members: dict[str, list[tuple[str, str, Evidence, Mapping[str, Any]]]] = {}
    relation_members: dict[str, list[tuple[str, str, str, str, Evidence]]] = {}
    for extraction in extractions:
        document_id = extraction["document_id"]
        for chunk in extraction["chunks"]:
            local: dict[str, str] = {}
            for entity in chunk.get("entities", ()):
                eid = entity_id(entity["name"], entity["type"])
                local.setdefault(normalize_name(entity["name"]), eid)
                for chunk_id in entity.get("chunk_ids") or (chunk["chunk_id"],):
                    entity_members.setdefault(eid, []).append(
                        (entity["name"], entity["type"], Evidence(chunk_id, document_id, entity.get("description", "")), entity.get("attributes") or {})
                    )
            for relation in chunk.get("relations", ()):
                source = local.get(normalize_name(relation["source"]))
                target = local.get(normalize_name(relation["target"]))
                if source is None or target is None or source == target:
                    continue
                type_key = normalize_type(relation.get("type") or "related_to")
                if type_key in SYMMETRIC_TYPES and target < source:
                    source, target = target, source
                rid = relation_id(source, target, type_key)
                for chunk_id in relation.get("chunk_ids") or (chunk["chunk_id"],):
                    relation_members.setdefault(rid, []).append(
                        (source, target, type_key, relation.get("name") or "", Evidence(chunk_id, document_id, relation.get("description", "")))
                    )
    entities = []
    for eid, members in entity_members.items():
        names = [m[0] for m in members]
        # the spelling seen most often represents the group; ties go to a plain (NFKC-stable) spelling, then the first seen
        name = max(dict.fromkeys(names), key=lambda n: (names.count(n), unicodedata.normalize("NFKC", n) == n))
        evidence = _merge_evidence(m[2] for m in members)
        attributes: dict[str, Any] = {}
        for member in members:
            for key, value in member[3].items():
                attributes.setdefault(key, value)
        entities.append(
            DraftEntity(
                id=eid, name=name, type=normalize_type(members[0][1]), description=_best_description(evidence),
                attributes=attributes, evidence=evidence, aliases=tuple(sorted(set(names) - {name})),
            )
        )
    relations = []
    for rid, members in relation_members.items():
        source, target, type_key, name, _ = members[0]
        evidence = _merge_evidence(m[4] for m in members)
        relations.append(
            DraftRelation(id=rid, source_id=source, target_id=target, type=type_key, name=name or type_key,
                          description=_best_description(evidence), evidence=evidence)
        )
    return GraphDraft(entities=tuple(sorted(entities, key=lambda e: e.id)), relations=tuple(sorted(relations, key=lambda r: r.id)))


def merge_entities(draft: GraphDraft, mapping: Mapping[str, str]) -> GraphDraft:
    """Apply an id mapping (merged id -> kept id): entities fold into the kept one, relation endpoints are rewritten."""
    if not mapping:
        return draft

    def resolve(eid: str) -> str:
        seen = set()
        while eid in mapping and eid not in seen:
            seen.add(eid)
            eid = mapping[eid]
        return eid

    groups: dict[str, list[DraftEntity]] = {}
    for entity in draft.entities:
        groups.setdefault(resolve(entity.id), []).append(entity)
    entities = []
    for kept_id, members in groups.items():
        kept = next((m for m in members if m.id == kept_id), members[0])
        evidence = _merge_evidence(e for m in members for e in m.evidence)
        aliases = {a for m in members for a in (m.name, *m.aliases)} - {kept.name}
        attributes: dict[str, Any] = {}
        for member in members:
            for key, value in member.attributes.items():
                attributes.setdefault(key, value)
        entities.append(
            attrs.evolve(kept, id=kept_id, evidence=evidence, aliases=tuple(sorted(aliases)), attributes=attributes,
                         description=kept.description or _best_description(evidence))
        )
    relations = [
        attrs.evolve(r, source_id=resolve(r.source_id), target_id=resolve(r.target_id))
        for r in draft.relations
    ]
    return GraphDraft(entities=tuple(sorted(entities, key=lambda e: e.id)), relations=merge_relations(relations))


def merge_relations(relations: Iterable[DraftRelation]) -> tuple[DraftRelation, ...]:
    """Exact relation dedup: one relation per (source, target, type); self-loops created by merging are dropped."""
    groups: dict[str, list[DraftRelation]] = {}
    for relation in relations:
        source, target = relation.source_id, relation.target_id
        if source == target:
            continue
        if relation.type in SYMMETRIC_TYPES and target < source:
            source, target = target, source
        rid = relation_id(source, target, relation.type)
        groups.setdefault(rid, []).append(attrs.evolve(relation, id=rid, source_id=source, target_id=target))
    merged = []
    for members in groups.values():
        evidence = _merge_evidence(e for m in members for e in m.evidence)
        merged.append(attrs.evolve(members[0], evidence=evidence, description=_best_description(evidence) or members[0].description))
    return tuple(sorted(merged, key=lambda r: r.id))
