"""``related`` memories: chunks one graph hop away from the results' entities (the spec's post-hoc expansion).

From the top-k result chunks: the entities they are evidence for (their other chunks are
related: they speak of the same entity), then every relation touching those entities,
and the chunks that evidence the relation or its other endpoint. Chunks already in the
results are left out. Related chunks are ordered by how many links reach them (more links
first), then by id, so the order is stable. The exact rule is ``GraphStore``'s optional
``chunk_links`` (``heta_framework.kb.graph_links``): a store that has it counts the links
in one query, any other is read fact by fact.

A caller who may not read every document gets links that rest on its documents alone: the
chunks are counted from the store's plain reads (``chunk_links_from_reads``) through
``ReadableGraph``, which shows only evidence from readable documents and only relations some
readable document supports. A related chunk, its link count and its ``via_relation`` then
never come from (or point through) a document the caller may not read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs
from heta_framework.kb.graph_links import chunk_links, chunk_links_from_reads


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


def related_chunks(graph: Any, result_chunks: Sequence[Any], limit: int,
                   readable: Callable[[str | None], bool] | None = None) -> list[RelatedChunk]:
    """Chunks linked to ``result_chunks`` (``QueryResult``s of kind chunk) through one graph edge; with ``readable``
    (a document id test), only through and to documents it allows."""
    result_ids = list(dict.fromkeys(r.id for r in result_chunks))
    documents = sorted({r.document_id for r in result_chunks if r.document_id})
    if not result_ids or not documents:
        return []
    if readable is None:
        links = chunk_links(graph, result_ids, documents, limit)
    else:
        links = chunk_links_from_reads(ReadableGraph(graph, readable), result_ids, [d for d in documents if readable(d)], limit)
    stored = graph.get_chunks([link.chunk_id for link in links])
    found = []
    for link in links:
        chunk = stored.get(link.chunk_id)
        if chunk is None or (readable is not None and not readable(chunk.document_id)):
            continue
        found.append(
            RelatedChunk(
                id=link.chunk_id, document_id=chunk.document_id, text=chunk.text, metadata=dict(chunk.metadata),
                via_entity=f"entity:{link.via_entity}", via_relation=f"relation:{link.via_relation}" if link.via_relation else "",
                links=link.links,
            )
        )
    return found


class ReadableGraph:
    """The reads ``chunk_links_from_reads`` makes, limited to the documents ``readable`` allows."""

    def __init__(self, graph: Any, readable: Callable[[str | None], bool]):
        self._graph = graph
        self._readable = readable
        self._relation_evidence: dict[str, list[tuple[str, str, str]]] = {}

    def facts_of_documents(self, document_ids: Sequence[str]) -> Any:
        return self._graph.facts_of_documents([d for d in document_ids if self._readable(d)])

    def evidence(self, fact_kind: str, fact_ids: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
        if fact_kind == "relation" and all(fact_id in self._relation_evidence for fact_id in fact_ids):
            return {fact_id: self._relation_evidence[fact_id] for fact_id in fact_ids if self._relation_evidence[fact_id]}
        kept = {
            fact_id: [row for row in rows if self._readable(row[1])]
            for fact_id, rows in self._graph.evidence(fact_kind, fact_ids).items()
        }
        return {fact_id: rows for fact_id, rows in kept.items() if rows}

    def relations_touching(self, entity_ids: Sequence[str]) -> list[Any]:
        """The relations some readable document supports (an edge only hidden documents know is not crossed)."""
        relations = self._graph.relations_touching(entity_ids)
        evidence = self.evidence("relation", [relation.id for relation in relations])
        self._relation_evidence = {relation.id: evidence.get(relation.id, []) for relation in relations}
        return [relation for relation in relations if relation.id in evidence]
