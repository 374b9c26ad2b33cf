"""Links between pages: two documents are related when their pages name the same key entities."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MAX_RELATED = 5


def related_pages(index: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """document id -> the documents sharing most entities with it (ties by id), at most ``MAX_RELATED``."""
    names = {doc: {e.casefold() for e in entry.get("entities", ())} for doc, entry in index.items()}
    holders: dict[str, set[str]] = {}
    for doc, entities in names.items():
        for entity in entities:
            holders.setdefault(entity, set()).add(doc)
    related = {}
    for doc, entities in names.items():
        shared: dict[str, int] = {}
        for entity in entities:
            for other in holders[entity] - {doc}:
                shared[other] = shared.get(other, 0) + 1
        related[doc] = [other for other, _ in sorted(shared.items(), key=lambda item: (-item[1], item[0]))[:MAX_RELATED]]
    return related
