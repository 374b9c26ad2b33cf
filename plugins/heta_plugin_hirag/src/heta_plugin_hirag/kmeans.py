"""Spherical k-means in numpy with a fixed seed: the same vectors in the same order give the same clusters.

HiRAG clusters with UMAP and a Gaussian mixture; k-means on the unit-normalised
embeddings (cosine) groups the same kind of neighbours without scikit-learn and
UMAP, and with ``k`` chosen from a target cluster size instead of a BIC search.
"""

from __future__ import annotations

import math

import numpy as np

#: iterations at most; small layers converge in a handful
MAX_ITERATIONS = 50


def normalised(vectors: np.ndarray) -> np.ndarray:
    matrix = np.asarray(vectors, dtype=np.float64)
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
        weights = np.clip(distance, 0.0, None) ** 2
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


def centroid(vectors: np.ndarray) -> np.ndarray:
    mean = normalised(vectors).sum(axis=0)
    norm = np.linalg.norm(mean)
    return mean / norm if norm else mean
