"""The layered graph: the graph's entities and relations, the summary entities, and an edge from each member to its summary.

``LayeredGraph`` reads like core's ``GraphStore`` (``entity_ids``, ``get_entities``,
``relations_touching``, ``get_relations``, ``evidence``, ``get_chunks``), so GraphRAG's
community detection and report material run over it unchanged. Nothing is written
anywhere: the summary entities live in the hierarchy file, not in the graph's tables.

Every node and edge rests on documents: an entity on the documents of its evidence, a
relation on those of its own, a summary entity (and the edges to it) on every document
its members rest on.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from heta_framework.kb.graph_store import StoredEntity, StoredRelation

from heta_plugin_hirag.hierarchy import Hierarchy, SummaryEntity, digest

MEMBER_OF = "member_of"


def member_edge_id(member: str, summary: str) -> str:
    return "hirag-edge:" + digest(member, summary)[:20]


def is_summary(node_id: str) -> bool:
    return node_id.startswith("hirag:")


def is_member_edge(relation_id: str) -> bool:
    return relation_id.startswith("hirag-edge:")


class LayeredGraph:
    def __init__(self, graph: Any, hierarchy: Hierarchy):
        self.graph = graph
        self.summaries: dict[str, SummaryEntity] = hierarchy.summaries()
        self.member_edges: dict[str, StoredRelation] = {}
        self._touching: dict[str, list[str]] = {}
        for summary in self.summaries.values():
            for member in summary.members:
                edge = StoredRelation(member_edge_id(member, summary.id), member, summary.id, MEMBER_OF, "member of", "")
                self.member_edges[edge.id] = edge
                self._touching.setdefault(member, []).append(edge.id)
                self._touching.setdefault(summary.id, []).append(edge.id)

    # --- the GraphStore reads GraphRAG's detection and reports use ---------------------------------

    def entity_ids(self) -> list[str]:
        return sorted([*self.graph.entity_ids(), *self.summaries])

    def get_entities(self, ids: Iterable[str]) -> dict[str, StoredEntity]:
        ids = list(ids)
        found = dict(self.graph.get_entities([i for i in ids if not is_summary(i)]))
        for i in ids:
            if (s := self.summaries.get(i)) is not None:
                found[i] = StoredEntity(s.id, s.name, s.type, s.description)
        return found

    def relations_touching(self, ids: Iterable[str]) -> list[StoredRelation]:
        ids = list(ids)
        found = list(self.graph.relations_touching([i for i in ids if not is_summary(i)]))
        edges = {e for i in ids for e in self._touching.get(i, ())}
        return found + [self.member_edges[e] for e in sorted(edges)]

    def get_relations(self, ids: Iterable[str]) -> dict[str, StoredRelation]:
        ids = list(ids)
        found = dict(self.graph.get_relations([i for i in ids if not is_member_edge(i)]))
        found.update({i: self.member_edges[i] for i in ids if i in self.member_edges})
        return found

    def evidence(self, fact_kind: str, ids: Iterable[str]) -> dict[str, list[tuple[str, str, str]]]:
        """The graph's evidence of its own facts; a summary entity and a member edge have none of their own."""
        wanted = [i for i in ids if not is_summary(i) and not is_member_edge(i)]
        return dict(self.graph.evidence(fact_kind, wanted)) if wanted else {}

    def get_chunks(self, ids: Iterable[str]) -> dict[str, Any]:
        return self.graph.get_chunks(list(ids))

    # --- documents ----------------------------------------------------------------------------------

    def entity_documents(self, ids: Sequence[str]) -> dict[str, frozenset[str]]:
        """The documents each node rests on."""
        rows = self.evidence("entity", ids)
        found = {i: frozenset(row[1] for row in rows.get(i, ())) for i in ids if not is_summary(i)}
        found.update({i: self.summaries[i].document_ids for i in ids if i in self.summaries})
        return found

    def relation_documents(self, ids: Sequence[str]) -> dict[str, frozenset[str]]:
        """The documents each edge rests on (a member edge: its summary's)."""
        rows = self.evidence("relation", ids)
        found = {i: frozenset(row[1] for row in rows.get(i, ())) for i in ids if not is_member_edge(i)}
        for i in ids:
            if (edge := self.member_edges.get(i)) is not None:
                found[i] = self.summaries[edge.target_id].document_ids
        return found


def documents_of(parts: Iterable[frozenset[str]]) -> list[str]:
    return sorted(set().union(*parts))


def adjacency(relations: Iterable[StoredRelation]) -> dict[str, list[tuple[str, str]]]:
    """node -> [(neighbour, edge id)] sorted, both directions, self-loops left out."""
    found: dict[str, set[tuple[str, str]]] = {}
    for r in relations:
        if r.source_id == r.target_id:
            continue
        found.setdefault(r.source_id, set()).add((r.target_id, r.id))
        found.setdefault(r.target_id, set()).add((r.source_id, r.id))
    return {node: sorted(edges) for node, edges in found.items()}


def all_relations(view: LayeredGraph, ids: Sequence[str] | None = None) -> list[StoredRelation]:
    relations = view.relations_touching(view.entity_ids() if ids is None else ids)
    return sorted({r.id: r for r in relations}.values(), key=lambda r: r.id)


def degree_in(members: Iterable[str], relations: Mapping[str, StoredRelation]) -> dict[str, int]:
    inside = set(members)
    counts = dict.fromkeys(inside, 0)
    for r in relations.values():
        if r.source_id in inside and r.target_id in inside and r.source_id != r.target_id:
            counts[r.source_id] += 1
            counts[r.target_id] += 1
    return counts
