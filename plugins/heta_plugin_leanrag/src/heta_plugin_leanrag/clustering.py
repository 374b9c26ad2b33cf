"""Clusters of one layer's nodes by their vectors: seeded spherical k-means, and the incremental form of it.

LeanRAG clusters each layer's entity vectors (the paper uses UMAP + a Gaussian mixture); here it is
k-means on unit vectors (cosine), seeded k-means++ initialisation and a fixed seed, in numpy alone:
the same vectors give the same clusters, and no heavy dependency comes with the plugin.

Every cluster has at least two members (a lone node joins the cluster whose centroid is nearest), so
every node of a layer gets a parent one level up and the next layer is at most half as large.

Incremental (``assign``): the clusters of the previous build are kept; a node they do not hold (a
new entity, an aggregate whose members changed) joins the cluster with the nearest centroid; a
cluster that grew past twice the target size is split by k-means again. Clusters no change reached
keep exactly their members, so their aggregates (and language-model summaries) stay as they were.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import attrs
import numpy as np

#: k-means stops after this many rounds even if a label still moves (it converges in a handful)
MAX_ROUNDS = 100


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` with each row scaled to length 1 (a zero row stays zero)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def centroid(rows: np.ndarray) -> np.ndarray:
    return unit_rows(rows.sum(axis=0, keepdims=True))[0]


def kmeans(vectors: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Labels ``0..k-1`` of spherical k-means over unit ``vectors`` (k-means++ start, fixed seed)."""
    n = len(vectors)
    k = max(1, min(k, n))
    if k == 1:
        return np.zeros(n, dtype=np.int64)
    rng = np.random.default_rng(seed)
    chosen = [int(rng.integers(n))]
    distance = 1.0 - vectors @ vectors[chosen[0]]
    for _ in range(1, k):
        weights = np.clip(distance, 0.0, None) ** 2
        weights[chosen] = 0.0
        total = float(weights.sum())
        if total <= 0.0:  # every remaining point coincides with a chosen one: take the first unchosen
            pick = next(i for i in range(n) if i not in chosen)
        else:
            pick = int(rng.choice(n, p=weights / total))
        chosen.append(pick)
        distance = np.minimum(distance, 1.0 - vectors @ vectors[pick])
    centroids = vectors[chosen].copy()
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(MAX_ROUNDS):
        similarity = vectors @ centroids.T
        new = similarity.argmax(axis=1)
        for c in range(k):  # an empty cluster takes the point that fits its own cluster worst
            if not (new == c).any():
                counts = np.bincount(new, minlength=k)
                fit = similarity[np.arange(n), new].copy()
                fit[counts[new] <= 1] = np.inf  # never empty another cluster to fill this one
                worst = int(fit.argmin())
                if np.isfinite(fit[worst]):
                    new[worst] = c
        if (new == labels).all():
            break
        labels = new
        for c in range(k):
            members = vectors[labels == c]
            if len(members):
                centroids[c] = centroid(members)
    return labels


def _split_large(rows: list[int], vectors: np.ndarray, cluster_size: int, seed: int) -> list[list[int]]:
    """``rows`` in groups of at most twice ``cluster_size``: k-means again on any group above that.

    The incremental ``assign`` splits a kept cluster above twice the size; a first build that left one
    that large would be split on the next build of the same documents, and its summary written again.
    """
    if len(rows) <= 2 * cluster_size:
        return [rows]
    labels = kmeans(vectors[rows], math.ceil(len(rows) / cluster_size), seed)
    parts: dict[int, list[int]] = {}
    for row, label in zip(rows, labels):
        parts.setdefault(int(label), []).append(row)
    groups = [parts[label] for label in sorted(parts)]
    if len(groups) == 1:  # the vectors coincide: k-means cannot tell them apart, so take them in order
        groups = [rows[start:start + cluster_size] for start in range(0, len(rows), cluster_size)]
    return [small for group in groups for small in _split_large(group, vectors, cluster_size, seed)]


def _nearest_with_room(groups: Sequence[Sequence[int]], member: int, vectors: np.ndarray, limit: int) -> int:
    """The index of the group whose centroid is nearest ``member`` among those below ``limit`` (any, if none is)."""
    similarity = np.stack([centroid(vectors[list(g)]) for g in groups]) @ vectors[member]
    full = np.array([len(g) >= limit for g in groups])
    if not full.all():
        similarity[full] = -np.inf
    return int(similarity.argmax())


def _merge_lone(groups: list[list[int]], vectors: np.ndarray, limit: int) -> list[list[int]]:
    """Each one-member group joins the nearest group that has room below ``limit``."""
    groups = [list(g) for g in groups if g]
    while len(groups) > 1:
        lone = next((i for i, g in enumerate(groups) if len(g) == 1), None)
        if lone is None:
            break
        member = groups.pop(lone)[0]
        groups[_nearest_with_room(groups, member, vectors, limit)].append(member)
    return groups


def fresh_clusters(ids: Sequence[str], vectors: np.ndarray, cluster_size: int, seed: int) -> list[list[str]]:
    """``ids`` (rows of unit ``vectors``) in about ``ceil(n / cluster_size)`` clusters of two to ``2 * cluster_size``.

    The bounds are the ones ``assign`` keeps, so clustering the same nodes again changes nothing.
    """
    k = max(1, math.ceil(len(ids) / cluster_size))
    labels = kmeans(vectors, k, seed)
    groups: dict[int, list[int]] = {}
    for row, label in enumerate(labels):
        groups.setdefault(int(label), []).append(row)
    bounded = [part for label in sorted(groups) for part in _split_large(groups[label], vectors, cluster_size, seed)]
    merged = _merge_lone(bounded, vectors, 2 * cluster_size)
    return sorted((sorted(ids[row] for row in group) for group in merged), key=lambda members: members[0])


@attrs.frozen
class Assignment:
    """One layer's clusters: ``(key, members)`` where ``key`` is the previous cluster's key it continues, or None."""

    clusters: tuple[tuple[str | None, tuple[str, ...]], ...]
    fresh: bool  # clustered from scratch (no previous clusters to keep)
    assigned: int  # nodes that joined a kept cluster
    split: int  # kept clusters that grew too large and were split


def assign(ids: Sequence[str], vectors: np.ndarray, previous: Sequence[tuple[str, Sequence[str]]], cluster_size: int,
           seed: int) -> Assignment:
    """The clusters of ``ids``: the ``previous`` ones kept where they still hold nodes, new nodes to the nearest.

    ``previous`` lists ``(key, members)``; members no longer among ``ids`` are dropped.
    """
    row_of = {node: row for row, node in enumerate(ids)}
    held: set[str] = set()
    kept: list[tuple[str | None, list[str]]] = []
    for key, members in previous:
        alive = [m for m in members if m in row_of and m not in held]
        held.update(alive)
        if alive:
            kept.append((key, alive))
    if not kept:
        return Assignment(tuple((None, tuple(c)) for c in fresh_clusters(ids, vectors, cluster_size, seed)), True, 0, 0)
    centroids = np.stack([centroid(vectors[[row_of[m] for m in members]]) for _, members in kept])
    newcomers = [node for node in ids if node not in held]
    for node in newcomers:  # against the kept clusters' centroids: the order newcomers come in changes nothing
        kept[int((centroids @ vectors[row_of[node]]).argmax())][1].append(node)
    clusters: list[tuple[str | None, list[str]]] = []
    split = 0
    for key, members in kept:
        if len(members) > 2 * cluster_size:
            split += 1
            parts = fresh_clusters(sorted(members), vectors[[row_of[m] for m in sorted(members)]], cluster_size, seed)
            clusters.extend((None, part) for part in parts)
        else:
            clusters.append((key, members))
    # a kept cluster left with one member: that member joins the nearest other cluster
    while len(clusters) > 1:
        lone = next((i for i, (_, members) in enumerate(clusters) if len(members) == 1), None)
        if lone is None:
            break
        member = clusters.pop(lone)[1][0]
        rows = [[row_of[m] for m in members] for _, members in clusters]
        clusters[_nearest_with_room(rows, row_of[member], vectors, 2 * cluster_size)][1].append(member)
    ordered = tuple((key, tuple(sorted(members))) for key, members in clusters)
    return Assignment(tuple(sorted(ordered, key=lambda c: c[1][0])), False, len(newcomers), split)


def centrality(members: Sequence[str], vectors: Mapping[str, np.ndarray]) -> list[str]:
    """``members`` most central first: cosine to the cluster's centroid, then id (a stable order)."""
    middle = centroid(np.stack([vectors[m] for m in members]))
    return sorted(members, key=lambda m: (-round(float(vectors[m] @ middle), 6), m))
