"""Bridge paths: the shortest path in the layered graph from a community's key entities to another community's.

HiRAG links the communities an answer draws on by the shortest path between their key
entities. Here the key entities of a community are its best-connected members (graph
entities before summary entities), and for each community the step finds, breadth-first
from them, the ``max_bridges`` nearest communities of the same level within ``max_hops``
edges. A query chains the communities it picked through these paths.

Incremental: every node has a fingerprint (its edges, its communities, whether it is a
key entity). A community's bridges are found again only when a changed node lies within
``max_hops`` of its key entities: further away, its search meets the same nodes and edges
as before, so it finds the same paths. The documents each path rests on are computed
again on every run (a document added elsewhere can support an entity on a kept path).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from heta_plugin_hirag.hierarchy import digest
from heta_plugin_hirag.layered import LayeredGraph, adjacency, all_relations, degree_in, documents_of, is_summary

FORMAT = 1
#: nodes one search visits at most (a summary entity of a top layer touches everything below it)
MAX_VISITS = 20000


@attrs.frozen
class BridgeSettings:
    key_entities: int = 3
    max_hops: int = 4
    max_bridges: int = 5

    def fingerprint(self) -> str:
        return digest(self.key_entities, self.max_hops, self.max_bridges)[:16]


@attrs.frozen
class BridgeChange:
    data: dict[str, Any]
    sources_recomputed: int
    sources_kept: int


def key_entities(members: Sequence[str], relations: Mapping[str, Any], count: int) -> list[str]:
    degree = degree_in(members, relations)
    return sorted(members, key=lambda m: (is_summary(m), -degree[m], m))[:count]


def fingerprints(adjacent: Mapping[str, list[tuple[str, str]]], communities_of: Mapping[str, list[str]], keys: set[str],
                 nodes: Iterable[str]) -> dict[str, str]:
    return {n: digest([e for _, e in adjacent.get(n, ())], communities_of.get(n, []), n in keys)[:12] for n in nodes}


def within(adjacent: Mapping[str, list[tuple[str, str]]], starts: Iterable[str], hops: int) -> set[str]:
    """Every node at most ``hops`` edges from ``starts``."""
    seen = set(starts)
    frontier = list(seen)
    for _ in range(hops):
        step = [other for node in frontier for other, _ in adjacent.get(node, ()) if other not in seen]
        seen.update(step)
        frontier = list(dict.fromkeys(step))
        if not frontier:
            break
    return seen


def search(adjacent: Mapping[str, list[tuple[str, str]]], starts: Sequence[str], targets: Mapping[str, str], own: str,
           settings: BridgeSettings) -> dict[str, dict[str, list[str]]]:
    """Breadth-first from ``starts``: the path to each of the nearest other communities (``targets``: key entity -> community)."""
    parent: dict[str, tuple[str, str] | None] = {s: None for s in starts}
    frontier = list(starts)
    found: dict[str, dict[str, list[str]]] = {}
    for _ in range(settings.max_hops):
        step: list[str] = []
        for node in frontier:
            for other, edge in adjacent.get(node, ()):
                if other in parent:
                    continue
                parent[other] = (node, edge)
                step.append(other)
                community = targets.get(other)
                if community is not None and community != own and community not in found:
                    found[community] = _path(parent, other)
                    if len(found) >= settings.max_bridges:
                        return found
        frontier = step
        if not frontier or len(parent) > MAX_VISITS:
            break
    return found


def _path(parent: Mapping[str, tuple[str, str] | None], end: str) -> dict[str, list[str]]:
    nodes, edges = [end], []
    link = parent[end]
    while link is not None:
        node, edge = link
        nodes.append(node)
        edges.append(edge)
        link = parent[node]
    return {"nodes": nodes[::-1], "edges": edges[::-1]}


def build(view: LayeredGraph, communities: Sequence[Any], previous: Mapping[str, Any] | None, settings: BridgeSettings) -> BridgeChange:
    """Key entities and bridges of ``communities`` (GraphRAG ``Community`` objects), reusing ``previous`` where nothing near changed."""
    relations = all_relations(view)
    by_id = {r.id: r for r in relations}
    adjacent = adjacency(relations)
    keys: dict[str, list[str]] = {}
    communities_of: dict[str, list[str]] = {}
    for c in communities:
        internal = {r: by_id[r] for r in c.relation_ids if r in by_id}
        keys[c.id] = key_entities(list(c.entity_ids), internal, settings.key_entities)
        for member in c.entity_ids:
            communities_of.setdefault(member, []).append(c.id)
    key_set = {k for ks in keys.values() for k in ks}
    nodes = set(adjacent) | set(communities_of)
    prints = fingerprints(adjacent, communities_of, key_set, nodes)
    reusable = previous is not None and previous.get("settings") == settings.fingerprint()
    old_prints: Mapping[str, str] = previous.get("fingerprints", {}) if previous and reusable else {}
    old_bridges: Mapping[str, Any] = previous.get("bridges", {}) if previous and reusable else {}
    changed = {n for n in nodes if old_prints.get(n) != prints[n]} | (set(old_prints) - nodes)
    near_change = within(adjacent, (n for n in changed if n in nodes), settings.max_hops)
    level = {c.id: c.level for c in communities}
    targets_by_level: dict[int, dict[str, str]] = {}
    for cid, ks in keys.items():
        for k in ks:
            targets_by_level.setdefault(level[cid], {})[k] = cid
    bridges: dict[str, dict[str, dict[str, Any]]] = {}
    recomputed = kept = 0
    for c in communities:
        if c.id in old_bridges and not near_change.intersection(keys[c.id]):
            bridges[c.id] = {other: dict(path) for other, path in old_bridges[c.id].items() if other in level}
            kept += 1
            continue
        bridges[c.id] = {other: dict(path) for other, path in search(adjacent, keys[c.id], targets_by_level[c.level], c.id, settings).items()}
        recomputed += 1
    _set_documents(view, bridges)
    data = {"format": FORMAT, "settings": settings.fingerprint(), "fingerprints": prints, "key_entities": keys,
            "levels": level, "bridges": bridges}
    return BridgeChange(data, recomputed, kept)


def _set_documents(view: LayeredGraph, bridges: Mapping[str, Mapping[str, dict[str, Any]]]) -> None:
    paths = [path for found in bridges.values() for path in found.values()]
    node_ids = sorted({n for p in paths for n in p["nodes"]})
    edge_ids = sorted({e for p in paths for e in p["edges"]})
    node_docs = view.entity_documents(node_ids)
    edge_docs = view.relation_documents(edge_ids)
    for path in paths:
        parts = [node_docs.get(n, frozenset()) for n in path["nodes"]] + [edge_docs.get(e, frozenset()) for e in path["edges"]]
        path["document_ids"] = documents_of(parts)
