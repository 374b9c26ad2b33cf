"""Which graph facts a query may see, and what they may say: the one rule every graph mode applies.

A fact (an entity or a relation) rests on evidence rows, each from one chunk of one document. A
query with a ``document_id`` filter (a caller's access scope is one, docs/security.md) sees:

- only facts with evidence in the allowed documents, pushed into the vector search as an id filter
  when the store offers ``facts_of_documents``, so a mode's top-k is the caller's top-k and no
  neighbourhood is reached through a fact only other documents support;
- of a fact whose evidence is not all readable by the caller, only what the readable evidence says:
  its description is rebuilt from that evidence, and what was merged from every document
  (attributes, aliases) is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from heta_framework.kb.access import AccessScope
from heta_framework.kb.search import QueryRequest

#: an evidence row as ``GraphStore.evidence`` gives it: (chunk id, document id, description)
EvidenceRow = tuple[str, str, str]


@attrs.frozen
class FactVisibility:
    """The facts a request may see (``None``: not narrowed) and the scope their text answers to."""

    entities: frozenset[str] | None = None
    relations: frozenset[str] | None = None
    scope: AccessScope | None = None

    @property
    def entity_filter(self) -> dict[str, Any] | None:
        """A vector-search filter for the entity collection (record ids are entity ids). The set itself, not a copy:
        one object per caller's scope, so a store that keeps what a large filter selects finds it by identity."""
        return None if self.entities is None else {"id": self.entities}

    @property
    def relation_filter(self) -> dict[str, Any] | None:
        return None if self.relations is None else {"id": self.relations}

    @property
    def nothing_visible(self) -> bool:
        return self.entities is not None and not self.entities and self.relations is not None and not self.relations

    def allows_entity(self, entity_id: str) -> bool:
        return self.entities is None or entity_id in self.entities

    def allows_relation(self, relation_id: str) -> bool:
        return self.relations is None or relation_id in self.relations

    def readable_rows(self, rows: Iterable[EvidenceRow]) -> list[EvidenceRow]:
        """The evidence rows from documents the caller may read (all of them without a scope)."""
        scope = self.scope
        return list(rows) if scope is None else [row for row in rows if scope.allows(row[1])]

    def fully_readable(self, rows: Iterable[EvidenceRow]) -> bool:
        return self.scope is None or self.scope.allows_all(row[1] for row in rows)

    def description(self, description: str, rows: Sequence[EvidenceRow]) -> str:
        """``description`` when every evidence row is readable, else the best one the readable rows give."""
        if self.fully_readable(rows):
            return description
        return best_description(row[2] for row in self.readable_rows(rows))

    def merged_fields(self, attributes: Mapping[str, Any], aliases: Sequence[str], rows: Sequence[EvidenceRow]) -> tuple[dict, list]:
        """Attributes and aliases, merged from every document: shown only when every document is readable."""
        return (dict(attributes), list(aliases)) if self.fully_readable(rows) else ({}, [])


def best_description(descriptions: Iterable[str]) -> str:
    """The longest description (then the first in text order), as the graph picks a fact's description."""
    ranked = sorted({d for d in descriptions if d}, key=lambda d: (-len(d), d))
    return ranked[0] if ranked else ""


def fact_visibility(graph: Any, request: QueryRequest) -> FactVisibility:
    """What ``request`` may see of ``graph``: its ``document_id`` filter and its caller's access scope."""
    scope = request.access if request.access is not None and request.access.restricted else None
    wanted = request.filters.get("document_id")
    if wanted is None or not hasattr(graph, "facts_of_documents"):
        return FactVisibility(scope=scope)  # the modes filter facts by their evidence after the search
    documents = frozenset(wanted) if isinstance(wanted, (list, tuple, set, frozenset)) else frozenset([wanted])

    def supported() -> tuple[frozenset[str], frozenset[str]]:
        entities, relations = graph.facts_of_documents(sorted(documents)) if documents else (set(), set())
        return frozenset(entities), frozenset(relations)

    # a caller's queries share the answer (at 10k documents it is a scan of the evidence table): the scope is made
    # anew whenever the catalog changes, and its stores are the same objects while it lives
    if request.access is not None and request.access.restricted and wanted is request.access.visible_filter:
        entities, relations = request.access.remember(("graph_facts", id(graph)), supported)
    else:
        entities, relations = supported()
    return FactVisibility(entities, relations, scope)
