"""Spherical k-means in numpy with a fixed seed: the same vectors in the same order give the same clusters.

HiRAG clusters with UMAP and a Gaussian mixture; k-means on the unit-normalised
embeddings (cosine) groups the same kind of neighbours without scikit-learn and
UMAP, and with the number of clusters following from a target cluster size instead
of a BIC search. ``split`` divides a large set a few parts at a time (at most
``BRANCHING`` per k-means), so its cost grows with n log n, not with n times the
number of clusters.
"""

from __future__ import annotations

import math

import numpy as np

#: iterations at most; small layers converge in a handful
MAX_ITERATIONS = 50
#: clusters one k-means makes at most; larger sets are split again, part by part
BRANCHING = 16
#: rows multiplied against the centroids at a time (bounds the memory of a similarity block)
BLOCK = 4096


def normalised(vectors: np.ndarray) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def cluster_count(size: int, cluster_size: int) -> int:
    """How many clusters ``size`` vectors make at ``cluster_size`` vectors each (at least 1)."""
    return max(1, math.ceil(size / cluster_size))


def kmeans(vectors: np.ndarray, k: int, seed: int) -> list[int]:
    """A cluster label per row of ``vectors`` (labels 0..k-1, each used), cosine similarity, k-means++ start."""
    points = normalised(vectors)
    n = len(points)
    k = max(1, min(k, n))
    if k == 1:
        return [0] * n
    rng = np.random.default_rng(seed)
    centres = [int(rng.integers(n))]
    distance = 1.0 - points @ points[centres[0]]
    for _ in range(1, k):
        weights = np.clip(distance.astype(np.float64), 0.0, None) ** 2
        total = float(weights.sum())
        # every point already sits on a centre (duplicates): take the first point not chosen
        choice = int(rng.choice(n, p=weights / total)) if total > 0 else next(i for i in range(n) if i not in centres)
        centres.append(choice)
        distance = np.minimum(distance, 1.0 - points @ points[choice])
    centroids = points[centres].copy()
    labels = np.full(n, -1)
    for _ in range(MAX_ITERATIONS):
        new_labels = np.argmax(points @ centroids.T, axis=1)
        if np.array_equal(new_labels, labels):
            break
        labels = new_labels
        for c in range(k):
            members = points[labels == c]
            if len(members):
                mean = members.sum(axis=0)
                norm = np.linalg.norm(mean)
                centroids[c] = mean / norm if norm else centroids[c]
            else:  # an empty cluster takes the point farthest from its centroid
                far = int(np.argmin(np.max(points @ centroids.T, axis=1)))
                centroids[c] = points[far]
    # labels renumbered by first appearance, so equal partitions give equal labels
    order: dict[int, int] = {}
    return [order.setdefault(int(label), len(order)) for label in labels]


def split(vectors: np.ndarray, cluster_size: int, seed: int) -> list[list[int]]:
    """Row indices in clusters of at most ``cluster_size``: k-means, and again inside every part still too large."""
    points = normalised(vectors)

    def parts(rows: list[int], depth: int) -> list[list[int]]:
        if len(rows) <= cluster_size:
            return [rows]
        labels = kmeans(points[rows], min(BRANCHING, cluster_count(len(rows), cluster_size)), seed + depth)
        groups: dict[int, list[int]] = {}
        for row, label in zip(rows, labels):
            groups.setdefault(label, []).append(row)
        if len(groups) == 1:  # identical vectors: nothing to tell apart, so cut in order
            return [rows[i: i + cluster_size] for i in range(0, len(rows), cluster_size)]
        return [part for group in groups.values() for part in parts(group, depth + 1)]

    return parts(list(range(len(points))), 0)


def nearest(points: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """The index of the most similar centroid for every row, a block of rows at a time."""
    return np.concatenate([np.argmax(points[i: i + BLOCK] @ centroids.T, axis=1) for i in range(0, len(points), BLOCK)]) \
        if len(points) else np.zeros(0, dtype=np.int64)


def centroid(vectors: np.ndarray) -> np.ndarray:
    mean = normalised(vectors).sum(axis=0)
    norm = np.linalg.norm(mean)
    return mean / norm if norm else mean
