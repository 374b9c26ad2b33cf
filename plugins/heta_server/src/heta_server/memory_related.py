"""``related`` memories: chunks one graph hop away from the results' entities (the spec's post-hoc expansion).

From the top-k result chunks: the entities they are evidence for (their other chunks are
related: they speak of the same entity), then every relation touching those entities,
and the chunks that evidence the relation or its other endpoint. Chunks already in the results are left out. Related chunks are ordered by
how many links reach them (more links first), then by id, so the order is stable.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs


@attrs.frozen
class RelatedChunk:
    id: str
    document_id: str
    text: str
    metadata: dict[str, Any]
    via_entity: str
    via_relation: str
    links: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.text,
            "document_id": self.document_id,
            "metadata": self.metadata,
            "via_entity": self.via_entity,
            "via_relation": self.via_relation or None,
            "links": self.links,
        }


def related_chunks(graph: Any, result_chunks: Sequence[Any], limit: int) -> list[RelatedChunk]:
    """Chunks linked to ``result_chunks`` (``QueryResult``s of kind chunk) through one graph edge."""
    result_ids = {r.id for r in result_chunks}
    documents = sorted({r.document_id for r in result_chunks if r.document_id})
    if not result_ids or not documents:
        return []
    entity_ids, _ = graph.facts_of_documents(documents)
    evidence = graph.evidence("entity", sorted(entity_ids))
    seeds = sorted(e for e, rows in evidence.items() if any(row[0] in result_ids for row in rows))
    if not seeds:
        return []
    seed_set = set(seeds)
    relations = graph.relations_touching(seeds)
    reached: dict[str, tuple[str, str]] = {}  # chunk id -> (via entity, via relation), first link found
    links: Counter[str] = Counter()
    for entity_id in seeds:  # other chunks about the same entity: the closest association there is
        for chunk_id, _, _ in evidence[entity_id]:
            reached.setdefault(chunk_id, (entity_id, ""))
            links[chunk_id] += 1
    relation_evidence = graph.evidence("relation", [r.id for r in relations])
    neighbours: dict[str, tuple[str, str]] = {}
    for relation in relations:
        seed = relation.source_id if relation.source_id in seed_set else relation.target_id
        other = relation.target_id if seed == relation.source_id else relation.source_id
        for chunk_id, _, _ in relation_evidence.get(relation.id, []):
            reached.setdefault(chunk_id, (seed, relation.id))
            links[chunk_id] += 1
        if other not in seed_set:
            neighbours.setdefault(other, (seed, relation.id))
    for entity_id, rows in graph.evidence("entity", sorted(neighbours)).items():
        for chunk_id, _, _ in rows:
            reached.setdefault(chunk_id, neighbours[entity_id])
            links[chunk_id] += 1
    candidates = sorted((c for c in reached if c not in result_ids), key=lambda c: (-links[c], c))[:limit]
    stored = graph.get_chunks(candidates)
    found = []
    for chunk_id in candidates:
        chunk = stored.get(chunk_id)
        if chunk is None:
            continue
        via_entity, via_relation = reached[chunk_id]
        found.append(
            RelatedChunk(
                id=chunk_id, document_id=chunk.document_id, text=chunk.text, metadata=dict(chunk.metadata),
                via_entity=f"entity:{via_entity}", via_relation=f"relation:{via_relation}" if via_relation else "",
                links=links[chunk_id],
            )
        )
    return found
