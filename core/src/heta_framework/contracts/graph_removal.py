"""What removing documents would take from a graph store, counted from its reads alone (nothing is written).

``heta remove --dry-run`` shows it: a fact whose every evidence row lies in the removed
documents goes (and a relation goes with either endpoint); a fact that keeps evidence
elsewhere stays, with less support ("reduced").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def graph_removal_preview(store: Any, document_ids: Sequence[str]) -> dict[str, int]:
    """``entities_removed``, ``entities_reduced``, ``relations_removed``, ``relations_reduced`` for ``document_ids``."""
    removing = set(document_ids)
    if hasattr(store, "facts_of_documents"):
        entity_ids, relation_ids = (set(ids) for ids in store.facts_of_documents(list(document_ids)))
    else:  # the optional read is missing: every entity's evidence, and the relations they touch
        entity_ids = {f for f, rows in store.evidence("entity", store.entity_ids()).items() if _in(rows, removing)}
        relation_ids = {r.id for r in store.relations_touching(sorted(entity_ids))}
        relation_ids = {f for f, rows in store.evidence("relation", sorted(relation_ids)).items() if _in(rows, removing)}
    kept_entities = _supported_elsewhere(store, "entity", entity_ids, removing)
    removed_entities = entity_ids - kept_entities
    kept_relations = _supported_elsewhere(store, "relation", relation_ids, removing)
    with_an_endpoint_gone = {r.id for r in store.relations_touching(sorted(removed_entities))} if removed_entities else set()
    removed_relations = (relation_ids - kept_relations) | with_an_endpoint_gone
    return {
        "entities_removed": len(removed_entities),
        "entities_reduced": len(kept_entities),
        "relations_removed": len(removed_relations),
        "relations_reduced": len(kept_relations - removed_relations),
    }


def _in(rows: Iterable[tuple[str, str, str]], documents: set[str]) -> bool:
    return any(document in documents for _, document, _ in rows)


def _supported_elsewhere(store: Any, kind: str, fact_ids: set[str], removing: set[str]) -> set[str]:
    """The facts among ``fact_ids`` with an evidence row in a document that stays."""
    if not fact_ids:
        return set()
    evidence = store.evidence(kind, sorted(fact_ids))
    return {fact for fact, rows in evidence.items() if any(document not in removing for _, document, _ in rows)}
