"""What one query may see of the hierarchy, and what each node and relation may say to it.

The documents a request may draw on are those its ``document_id`` filter names (a caller's access
scope arrives as one, docs/security.md) and its access scope allows. Then:

- a base entity or relation is seen when some of its evidence is in those documents; when not all
  of it is, its description is rebuilt from that evidence alone (as ``heta_graph_search`` does);
- an aggregate is shown whole (its name, description and findings, by the model or extractive)
  only when every document it rests on may be read. Otherwise it is rebuilt from what may be read:
  the extractive summary of its members that are seen (most central first), each itself shown whole
  or rebuilt; with no member seen, it is not seen;
- a relation between aggregates is shown whole under the same rule; otherwise its description is
  rebuilt from the member relations that are seen, and it is not seen when none is or when either
  aggregate is not.

An aggregate's stored vector embeds all it rests on, so only wholly readable aggregates are searched
by it (``whole_aggregates``, an id filter pushed into the vector search). A partly readable one is
never found by what its hidden part says: the engine matches it by its rebuilt text, embedded at
query time, and only when it lies above one of the readable entities nearest the query.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs
from heta_framework.kb.search import QueryRequest
from heta_plugin_graph.visibility import best_description

from heta_plugin_leanrag import summaries
from heta_plugin_leanrag.persist import Hierarchy

#: members of an aggregate listed with it (and the most a rebuilt aggregate is written from)
MEMBERS_SHOWN = 10
#: member relations read at a time while rebuilding a relation between aggregates
RELATION_BATCH = 64


@attrs.frozen
class Shown:
    """A node or relation as this request may see it."""

    id: str
    kind: str  # entity | aggregate | relation | aggregate_relation
    level: int
    name: str
    description: str
    origin: str  # graph | language_model | extractive | extractive_fallback | rebuilt
    document_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...] = ()
    findings: tuple[dict[str, str], ...] = ()
    members: tuple[str, ...] = ()
    entity_type: str = ""
    relation_name: str = ""
    source: str = ""
    target: str = ""
    attributes: dict[str, Any] = attrs.field(factory=dict)
    aliases: tuple[str, ...] = ()
    headline: str = ""


def _as_set(value: Any) -> frozenset[str]:
    return frozenset(value) if isinstance(value, (list, tuple, set, frozenset)) else frozenset([value])


class Reading:
    """One request's view of the graph and the hierarchy (memoised: build it per query)."""

    def __init__(self, graph: Any, hierarchy: Hierarchy, request: QueryRequest):
        self.graph = graph
        self.hierarchy = hierarchy
        self.scope = request.access if request.access is not None and request.access.restricted else None
        wanted = request.filters.get("document_id")
        self.documents = None if wanted is None else _as_set(wanted)
        self.narrowed = self.scope is not None or self.documents is not None
        self._entities: dict[str, tuple[Any, list]] = {}
        self._relations: dict[str, tuple[Any, list]] = {}
        self._shown: dict[str, Shown | None] = {}

    # --- documents -------------------------------------------------------------------------------

    def allows(self, document_id: str) -> bool:
        return (self.documents is None or document_id in self.documents) and (self.scope is None or self.scope.allows(document_id))

    def allows_all(self, document_ids: Iterable[str]) -> bool:
        return all(self.allows(d) for d in document_ids)

    def allowed(self, document_ids: Iterable[str]) -> tuple[str, ...]:
        return tuple(sorted(d for d in document_ids if self.allows(d)))

    def whole_aggregates(self) -> list[str] | None:
        """The aggregates this request may see whole (``None``: every one, nothing narrows the request)."""
        if not self.narrowed:
            return None
        return sorted(a for a, record in self.hierarchy.aggregates.items() if self.allows_all(record["documents"]))

    # --- base facts ------------------------------------------------------------------------------

    def load_entities(self, ids: Iterable[str]) -> None:
        missing = [i for i in dict.fromkeys(ids) if i not in self._entities]
        if missing:
            entities, rows = self.graph.get_entities(missing), self.graph.evidence("entity", missing)
            for i in missing:
                self._entities[i] = (entities.get(i), list(rows.get(i, [])))

    def load_relations(self, ids: Iterable[str]) -> None:
        missing = [i for i in dict.fromkeys(ids) if i not in self._relations]
        if missing:
            relations, rows = self.graph.get_relations(missing), self.graph.evidence("relation", missing)
            for i in missing:
                self._relations[i] = (relations.get(i), list(rows.get(i, [])))

    def entity(self, entity_id: str) -> Shown | None:
        self.load_entities([entity_id])
        entity, rows = self._entities[entity_id]
        readable = [r for r in rows if self.allows(r[1])]
        if entity is None or not readable:
            return None
        whole = len(readable) == len(rows)
        return Shown(
            entity_id, "entity", 0, entity.name, entity.description if whole else best_description(r[2] for r in readable), "graph",
            self.allowed(r[1] for r in readable), tuple(dict.fromkeys(r[0] for r in readable)), entity_type=entity.type,
            attributes=dict(entity.attributes) if whole else {}, aliases=tuple(entity.aliases) if whole else (), headline=entity.name,
        )

    def relation(self, relation_id: str, names: dict[str, str]) -> Shown | None:
        self.load_relations([relation_id])
        relation, rows = self._relations[relation_id]
        readable = [r for r in rows if self.allows(r[1])]
        if relation is None or not readable:
            return None
        whole = len(readable) == len(rows)
        return Shown(
            relation_id, "relation", 0, relation.name or relation.type, relation.description if whole else best_description(r[2] for r in readable),
            "graph", self.allowed(r[1] for r in readable), tuple(dict.fromkeys(r[0] for r in readable)), relation_name=relation.name or relation.type,
            source=names.get(relation.source_id, relation.source_id), target=names.get(relation.target_id, relation.target_id),
        )

    # --- aggregates ----------------------------------------------------------------------------------

    def node(self, node_id: str) -> Shown | None:
        return self.aggregate(node_id) if node_id in self.hierarchy.aggregates else self.entity(node_id)

    def aggregate(self, aggregate_id: str) -> Shown | None:
        if aggregate_id not in self._shown:
            self._shown[aggregate_id] = self._aggregate(aggregate_id)
        return self._shown[aggregate_id]

    def _aggregate(self, aggregate_id: str) -> Shown | None:
        record = self.hierarchy.aggregates.get(aggregate_id)
        if record is None:
            return None
        documents = record["documents"]
        chunk_ids = tuple(c for c, _ in record["chunk_ids"])
        members: list[str] = record["members"]
        if record["level"] == 1:
            self.load_entities(members)
        if self.allows_all(documents):
            names = [self.hierarchy.aggregates[m]["name"] if m in self.hierarchy.aggregates else self._entity_name(m) for m in members]
            return Shown(aggregate_id, "aggregate", record["level"], record["name"], record["description"], record["origin"],
                         tuple(documents), chunk_ids, tuple(record["findings"]), tuple(n for n in names if n)[:MEMBERS_SHOWN],
                         headline=record["headline"])
        if not any(self.allows(d) for d in documents):
            return None
        seen = []
        for member in members:  # most central first
            shown = self.node(member)
            if shown is not None:
                seen.append(shown)
                if len(seen) == MEMBERS_SHOWN:
                    break
        if not seen:
            return None
        summary = summaries.extractive_aggregate((s.headline, s.description) for s in seen)
        return Shown(aggregate_id, "aggregate", record["level"], summary["name"], summary["description"], "rebuilt",
                     self.allowed(documents), chunk_ids, tuple(summary["findings"]), tuple(s.name for s in seen), headline=seen[0].headline)

    def _entity_name(self, entity_id: str) -> str:
        self.load_entities([entity_id])
        entity = self._entities[entity_id][0]
        return entity.name if entity is not None else ""

    def aggregate_relation(self, relation_id: str) -> Shown | None:
        record = self.hierarchy.relations.get(relation_id)
        if record is None:
            return None
        source, target = self.aggregate(record["source"]), self.aggregate(record["target"])
        if source is None or target is None:
            return None
        documents = record["documents"]
        common = dict(kind="aggregate_relation", level=record["level"], name="related to", relation_name="related to",
                      source=source.name, target=target.name, chunk_ids=tuple(record["chunk_ids"]))
        if self.allows_all(documents):
            return Shown(relation_id, description=record["description"], origin=record["origin"], document_ids=tuple(documents), **common)
        if not any(self.allows(d) for d in documents):
            return None
        texts = self._readable_relation_texts(record["base_relation_ids"])
        if not texts:
            return None
        return Shown(relation_id, description=summaries.extractive_relation(texts), origin="rebuilt", document_ids=self.allowed(documents),
                     **common)

    def _readable_relation_texts(self, relation_ids: Sequence[str]) -> list[str]:
        texts: list[str] = []
        for start in range(0, len(relation_ids), RELATION_BATCH):
            batch = relation_ids[start : start + RELATION_BATCH]
            self.load_relations(batch)
            for relation_id in batch:
                relation, rows = self._relations[relation_id]
                readable = [r for r in rows if self.allows(r[1])]
                if relation is None or not readable:
                    continue
                text = relation.description if len(readable) == len(rows) else best_description(r[2] for r in readable)
                if text and text not in texts:
                    texts.append(text)
            if len(texts) >= summaries.EXTRACTIVE_RELATIONS:
                break
        return texts
