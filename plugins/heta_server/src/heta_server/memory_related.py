"""``related`` memories: chunks one graph hop away from the results' entities (the spec's post-hoc expansion).

From the top-k result chunks: the entities they are evidence for (their other chunks are
related: they speak of the same entity), then every relation touching those entities,
and the chunks that evidence the relation or its other endpoint. Chunks already in the
results are left out. Related chunks are ordered by how many links reach them (more links
first), then by id, so the order is stable. The exact rule is ``GraphStore``'s optional
``chunk_links`` (``heta_framework.kb.graph_links``): a store that has it counts the links
in one query, any other is read fact by fact.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from heta_framework.kb.graph_links import chunk_links


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
    result_ids = list(dict.fromkeys(r.id for r in result_chunks))
    documents = sorted({r.document_id for r in result_chunks if r.document_id})
    if not result_ids or not documents:
        return []
    links = chunk_links(graph, result_ids, documents, limit)
    stored = graph.get_chunks([link.chunk_id for link in links])
    found = []
    for link in links:
        chunk = stored.get(link.chunk_id)
        if chunk is None:
            continue
        found.append(
            RelatedChunk(
                id=link.chunk_id, document_id=chunk.document_id, text=chunk.text, metadata=dict(chunk.metadata),
                via_entity=f"entity:{link.via_entity}", via_relation=f"relation:{link.via_relation}" if link.via_relation else "",
                links=link.links,
            )
        )
    return found
