"""The layers of summary entities above the graph, and how one layer is clustered again after a change.

Layer 0 is the graph's entities. Layer ``L`` clusters the nodes of layer ``L-1`` by
their embeddings (spherical k-means, fixed seed, clusters of at most ``cluster_size``,
``kmeans.split``); every cluster of two or more nodes
gets a summary entity, which is a node of layer ``L``; a node alone in its cluster is
carried up as it is. Layering stops when a layer has ``min_layer_size`` nodes or fewer,
when clustering would keep more than ``stop_ratio`` of them (the layer stops shrinking),
or after ``max_layers``.

Incremental: a layer keeps its previous clusters. A node whose text is unchanged stays
in its cluster; a removed or changed node leaves it. New or changed nodes go with their
nearest previous cluster (by centroid), and only those touched clusters are clustered
again, together with the new nodes (when most of a layer is new, all of it is). A cluster's ``content_hash`` covers its members and
their texts: its summary is written again only when that changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from heta_plugin_hirag.kmeans import centroid, nearest, normalised, split

FORMAT = 1


def digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


@attrs.frozen
class LayerSettings:
    cluster_size: int = 10
    min_layer_size: int = 3
    stop_ratio: float = 0.8
    max_layers: int = 4
    seed: int = 224

    def fingerprint(self) -> str:
        """Clusters kept from a build with other settings would not be these settings' clusters."""
        return digest(self.cluster_size, self.seed)[:16]


@attrs.frozen
class Node:
    """A node of a layer: a graph entity (layer 0) or a summary entity."""

    id: str
    name: str
    type: str
    description: str
    text: str
    documents: frozenset[str]
    layer: int = 0

    @property
    def text_hash(self) -> str:
        return digest(self.text)[:16]


@attrs.frozen
class Cluster:
    id: str
    layer: int
    members: tuple[str, ...]
    content_hash: str
    #: the summary entity (``None`` for a node alone, carried up as it is)
    summary: Mapping[str, Any] | None = None
    source: str = ""
    document_ids: tuple[str, ...] = ()

    @property
    def summary_id(self) -> str | None:
        return summary_id(self.layer, self.members) if self.summary is not None else None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "members": list(self.members), "content_hash": self.content_hash}
        if self.summary is not None:
            data.update(summary_id=self.summary_id, summary=dict(self.summary), source=self.source, document_ids=list(self.document_ids))
        return data

    @classmethod
    def from_json(cls, layer: int, data: Mapping[str, Any]) -> Cluster:
        return cls(data["id"], layer, tuple(data["members"]), data["content_hash"], data.get("summary"), data.get("source", ""),
                   tuple(data.get("document_ids", ())))


@attrs.frozen
class Layer:
    number: int
    #: every node clustered in this layer -> its text hash (what the next build compares against)
    inputs: Mapping[str, str]
    clusters: tuple[Cluster, ...]

    def to_json(self) -> dict[str, Any]:
        return {"layer": self.number, "inputs": dict(self.inputs), "clusters": [c.to_json() for c in self.clusters]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Layer:
        number = int(data["layer"])
        return cls(number, dict(data["inputs"]), tuple(Cluster.from_json(number, c) for c in data["clusters"]))


@attrs.frozen
class SummaryEntity:
    id: str
    layer: int
    name: str
    type: str
    description: str
    members: tuple[str, ...]
    document_ids: frozenset[str]
    source: str

    @property
    def text(self) -> str:
        return summary_text(self.name, self.type, self.description)


@attrs.frozen
class Hierarchy:
    settings: str = ""
    layers: tuple[Layer, ...] = ()

    def layer(self, number: int) -> Layer | None:
        return next((layer for layer in self.layers if layer.number == number), None)

    def summaries(self) -> dict[str, SummaryEntity]:
        found: dict[str, SummaryEntity] = {}
        for layer in self.layers:
            for cluster in layer.clusters:
                if cluster.summary is not None and (sid := cluster.summary_id) is not None:
                    s = cluster.summary
                    found[sid] = SummaryEntity(sid, layer.number, s["name"], s["type"], s["description"], cluster.members,
                                               frozenset(cluster.document_ids), cluster.source)
        return found

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "settings": self.settings, "layers": [layer.to_json() for layer in self.layers]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Hierarchy:
        if not data:
            return cls()
        return cls(data.get("settings", ""), tuple(Layer.from_json(layer) for layer in data["layers"]))


def summary_id(layer: int, members: Sequence[str]) -> str:
    """A summary entity's id: its layer and its members (never a graph entity's id, which starts with ``e``)."""
    return "hirag:" + digest(layer, sorted(members))[:20]


def summary_text(name: str, type_name: str, description: str) -> str:
    """What a summary entity's vector embeds (the graph plugin's entity text, so the same model reads both alike)."""
    from heta_plugin_graph.vectors import entity_text

    return entity_text(name, type_name, description)


def cluster_id(layer: int, members: Sequence[str]) -> str:
    return f"h{layer}-" + digest(layer, sorted(members))[:16]


def content_hash(members: Sequence[str], nodes: Mapping[str, Node]) -> str:
    return digest([(m, nodes[m].text_hash) for m in sorted(members)])


def plan_layer(number: int, nodes: Sequence[Node], vectors: np.ndarray, previous: Layer | None, settings: LayerSettings) -> list[list[str]]:
    """The member lists of layer ``number``'s clusters (each sorted; sorted by first member).

    ``nodes`` are sorted by id and ``vectors`` has a row per node. With ``previous`` (this
    layer from the last build), only the clusters the changed nodes touch are clustered again.
    """
    ids = [n.id for n in nodes]
    row = {node_id: i for i, node_id in enumerate(ids)}
    points = normalised(vectors)

    def cluster(members: list[str]) -> list[list[str]]:
        members = sorted(members)
        parts = split(points[[row[m] for m in members]], settings.cluster_size, settings.seed + 1000 * number)
        return [[members[i] for i in part] for part in parts]

    kept = {n.id for n in nodes if previous is not None and previous.inputs.get(n.id) == n.text_hash}
    fresh = [node_id for node_id in ids if node_id not in kept]
    if previous is None or len(fresh) * 2 > len(ids):  # most of the layer is new: cluster it afresh
        return sorted((sorted(g) for g in cluster(ids)), key=lambda g: g[0]) if ids else []
    old = [[m for m in c.members if m in kept] for c in previous.clusters]
    old = [members for members in old if members]
    touched: set[int] = set()
    if fresh and old:
        centroids = np.stack([centroid(points[[row[m] for m in members]]) for members in old])
        touched = {int(i) for i in nearest(points[[row[f] for f in fresh]], centroids)}
    pool = fresh + [m for i in sorted(touched) for m in old[i]]
    groups = [members for i, members in enumerate(old) if i not in touched]
    if pool:
        groups += cluster(pool)
    return sorted((sorted(g) for g in groups), key=lambda g: g[0])


def centrality_order(members: Sequence[str], nodes: Sequence[Node], vectors: np.ndarray) -> list[str]:
    """``members`` most central first: nearest the cluster's centroid (ties by id)."""
    row = {n.id: i for i, n in enumerate(nodes)}
    points = normalised(vectors[[row[m] for m in members]])
    similarity = points @ centroid(points)
    return [m for _, m in sorted(zip((-float(s) for s in similarity), members))]
