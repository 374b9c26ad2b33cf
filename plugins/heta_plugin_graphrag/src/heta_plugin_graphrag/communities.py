"""Hierarchical Leiden communities over the graph's entities, incremental by connected component.

The graph is read only through core's ``GraphStore`` contract (``entity_ids``,
``get_entities``, ``relations_touching``). As in GraphRAG, only entities with a
relation take part (an isolated entity has no community).

Levels follow GraphRAG's hierarchical Leiden: level 0 is Leiden (modularity,
fixed seed) on each connected component; a community larger than
``max_cluster_size`` is split again by Leiden on its own subgraph into level 1,
and so on down to ``max_levels``. Every community keeps its parent.

Incremental: a component whose entities and relations are exactly those of the
previous detection keeps its communities as they were (not re-detected), so
adding or removing documents only re-clusters the components they touch. A
community's ``content_hash`` covers its members, internal relations and their
descriptions: the report step re-reports a community only when it changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from heta_framework.kb.graph_store import StoredEntity, StoredRelation


def _hash(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


@attrs.frozen
class Community:
    id: str
    level: int
    parent: str | None
    entity_ids: tuple[str, ...]
    relation_ids: tuple[str, ...]
    content_hash: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "level": self.level, "parent": self.parent, "entity_ids": list(self.entity_ids),
                "relation_ids": list(self.relation_ids), "content_hash": self.content_hash}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Community:
        return cls(data["id"], int(data["level"]), data.get("parent"), tuple(data["entity_ids"]),
                   tuple(data["relation_ids"]), data["content_hash"])


@attrs.frozen
class Detection:
    """Every community, grouped by the component (its signature) it came from."""

    components: Mapping[str, tuple[Community, ...]] = attrs.field(factory=dict)

    @property
    def communities(self) -> list[Community]:
        return [c for signature in sorted(self.components) for c in self.components[signature]]

    def to_json(self) -> dict[str, Any]:
        return {"format": 1, "components": {s: [c.to_json() for c in cs] for s, cs in self.components.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Detection:
        if not data:
            return cls()
        return cls({s: tuple(Community.from_json(c) for c in cs) for s, cs in data["components"].items()})


@attrs.frozen
class DetectionSettings:
    max_cluster_size: int = 10
    max_levels: int = 3
    resolution: float = 1.0
    #: each level down multiplies the resolution by this, so a community coherent at a coarse
    #: resolution shows its finer structure (the same resolution would mostly find it whole again)
    sublevel_resolution_factor: float = 2.0
    seed: int = 0xDEADBEEF


def read_graph(graph: Any) -> tuple[dict[str, StoredEntity], list[StoredRelation]]:
    ids = graph.entity_ids()
    relations = [r for r in graph.relations_touching(ids) if r.source_id != r.target_id]
    relations = sorted({r.id: r for r in relations}.values(), key=lambda r: r.id)
    return graph.get_entities(ids), relations


def _leiden(nodes: Sequence[str], edges: Sequence[tuple[str, str]], settings: DetectionSettings, level: int = 0) -> list[list[str]]:
    """Leiden's partition of ``nodes`` (sorted input, fixed seed: the same graph gives the same communities)."""
    # imported where used: igraph (with the matplotlib it loads) would add seconds to every `heta` command
    import igraph
    import leidenalg

    index = {node: i for i, node in enumerate(nodes)}
    weights: dict[tuple[int, int], float] = {}
    for a, b in edges:
        key = (min(index[a], index[b]), max(index[a], index[b]))
        weights[key] = weights.get(key, 0.0) + 1.0  # parallel relations strengthen the tie
    g = igraph.Graph(n=len(nodes), edges=sorted(weights))
    partition = leidenalg.find_partition(
        g, leidenalg.RBConfigurationVertexPartition, weights=[weights[e] for e in sorted(weights)],
        resolution_parameter=settings.resolution * settings.sublevel_resolution_factor**level, seed=settings.seed,
    )
    return sorted((sorted(nodes[i] for i in members) for members in partition if members), key=lambda m: m[0])


def _component_communities(
    nodes: list[str], relations: list[StoredRelation], entities: Mapping[str, StoredEntity], settings: DetectionSettings
) -> tuple[Community, ...]:
    out: list[Community] = []

    def inside(members: set[str]) -> list[StoredRelation]:
        return [r for r in relations if r.source_id in members and r.target_id in members]

    def add(members: list[str], level: int, parent: str | None) -> None:
        member_set = set(members)
        internal = inside(member_set)
        community_id = "c" + _hash(level, members)[:16]
        community = Community(community_id, level, parent, tuple(members), tuple(r.id for r in internal), "")
        out.append(attrs.evolve(community, content_hash=_content_of(community, entities, internal)))
        if len(members) > settings.max_cluster_size and level + 1 < settings.max_levels and internal:
            parts = _leiden(members, [(r.source_id, r.target_id) for r in internal], settings, level + 1)
            if len(parts) > 1:  # Leiden found structure; one part would only repeat this community
                for part in parts:
                    if len(part) > 1:
                        add(part, level + 1, community_id)

    for part in _leiden(nodes, [(r.source_id, r.target_id) for r in relations], settings):
        if len(part) > 1:
            add(part, 0, None)
        # a lone entity of a component (tied only by relations Leiden cut) stays out, as in GraphRAG
    return tuple(out)


def _components(entities: Mapping[str, StoredEntity], relations: list[StoredRelation]) -> list[tuple[list[str], list[StoredRelation]]]:
    nodes = sorted({e for r in relations for e in (r.source_id, r.target_id) if e in entities})
    index = {node: i for i, node in enumerate(nodes)}
    kept = [r for r in relations if r.source_id in index and r.target_id in index]
    import igraph  # where used, as in _leiden

    g = igraph.Graph(n=len(nodes), edges=[(index[r.source_id], index[r.target_id]) for r in kept])
    membership = g.connected_components().membership if nodes else []
    groups: dict[int, tuple[list[str], list[StoredRelation]]] = {}
    for node, component in zip(nodes, membership):
        groups.setdefault(component, ([], []))[0].append(node)
    for r in kept:
        groups[membership[index[r.source_id]]][1].append(r)
    return list(groups.values())


@attrs.frozen
class DetectionChange:
    detection: Detection
    components_redetected: int
    components_kept: int
    communities_changed: tuple[str, ...]  # new ids, or ids whose content_hash changed
    communities_removed: tuple[str, ...]


def detect(graph: Any, previous: Detection, settings: DetectionSettings) -> DetectionChange:
    entities, relations = read_graph(graph)
    components: dict[str, tuple[Community, ...]] = {}
    redetected = kept = 0
    for nodes, component_relations in _components(entities, relations):
        signature = _hash(nodes, sorted(r.id for r in component_relations))
        old = previous.components.get(signature)
        if old is not None and all(
            c.content_hash == _content_of(c, entities, component_relations) for c in old
        ):
            components[signature] = old  # untouched component: its communities stay exactly as they were
            kept += 1
            continue
        components[signature] = _component_communities(nodes, component_relations, entities, settings)
        redetected += 1
    detection = Detection(components)
    before = {c.id: c.content_hash for c in previous.communities}
    after = {c.id: c.content_hash for c in detection.communities}
    changed = tuple(sorted(i for i, h in after.items() if before.get(i) != h))
    removed = tuple(sorted(set(before) - set(after)))
    return DetectionChange(detection, redetected, kept, changed, removed)


def _content_of(community: Community, entities: Mapping[str, StoredEntity], relations: list[StoredRelation]) -> str:
    """The content hash the community would have now (a description can change while ids stay)."""
    members = list(community.entity_ids)
    member_set = set(members)
    internal = [r for r in relations if r.source_id in member_set and r.target_id in member_set]
    return _hash(
        [(e, entities[e].name, entities[e].type, entities[e].description) for e in members if e in entities],
        [(r.id, r.source_id, r.target_id, r.name, r.description) for r in internal],
    )
