"""Seeded spherical k-means, the incremental assignment, and how two chains of parents join (no knowledge base)."""

from __future__ import annotations

import numpy as np
from heta_plugin_leanrag.clustering import assign, centrality, fresh_clusters, kmeans, unit_rows
from heta_plugin_leanrag.engine import join_chains


def blobs(sizes: list[int], seed: int = 7) -> tuple[list[str], np.ndarray]:
    """Points around well separated directions, ids ``b<blob>-<i>``."""
    rng = np.random.default_rng(seed)
    centres = np.eye(16)[: len(sizes)] * 5
    ids, rows = [], []
    for b, size in enumerate(sizes):
        for i in range(size):
            ids.append(f"b{b}-{i:02d}")
            rows.append(centres[b] + rng.normal(scale=0.3, size=16))
    return ids, unit_rows(np.stack(rows))


def test_kmeans_is_seeded_and_finds_separated_groups():
    ids, vectors = blobs([6, 6, 6])
    first, again = kmeans(vectors, 3, seed=1), kmeans(vectors, 3, seed=1)
    assert (first == again).all()
    groups = {frozenset(i for i, label in zip(ids, first) if label == c) for c in set(first)}
    assert groups == {frozenset(i for i in ids if i.startswith(f"b{b}-")) for b in range(3)}


def test_fresh_clusters_have_the_target_count_and_no_lone_member():
    ids, vectors = blobs([9, 9, 1])  # the lone point joins the cluster whose centroid is nearest
    clusters = fresh_clusters(ids, vectors, cluster_size=10, seed=3)
    assert len(clusters) == 2 and sorted(m for c in clusters for m in c) == sorted(ids)
    assert all(len(c) >= 2 for c in clusters)
    assert fresh_clusters(ids, vectors, cluster_size=100, seed=3) == [sorted(ids)]  # one cluster: a root


def test_assign_keeps_previous_clusters_and_sends_newcomers_to_the_nearest():
    ids, vectors = blobs([5, 5, 3])
    previous = [("A", [i for i in ids if i.startswith("b0-")][:4] + ["gone"]), ("B", [i for i in ids if i.startswith("b1-")])]
    result = assign(ids, vectors, previous, cluster_size=10, seed=0)
    clusters = dict(result.clusters)
    assert not result.fresh and result.assigned == 4  # b0-04 and the three of blob 2
    assert set(clusters["A"]) >= {i for i in ids if i.startswith("b0-")} and "gone" not in clusters["A"]
    assert set(clusters["B"]) >= {i for i in ids if i.startswith("b1-")}
    assert sorted(m for _, members in result.clusters for m in members) == sorted(ids)


def test_assign_splits_a_cluster_grown_past_twice_the_size_and_merges_a_lone_one():
    ids, vectors = blobs([6, 6])
    grown = assign(ids, vectors, [("A", ids[:2]), ("B", ids[6:8])], cluster_size=2, seed=0)
    assert grown.split == 2 and all(key is None for key, _ in grown.clusters)  # split parts are new clusters
    assert all(len(members) >= 2 for _, members in grown.clusters)
    lone = assign(ids[:6] + ids[6:7], vectors[:7], [("A", ids[:6]), ("B", ids[6:7])], cluster_size=10, seed=0)
    assert dict(lone.clusters) == {"A": tuple(sorted(ids[:7]))}


def test_assign_without_previous_clusters_is_fresh():
    ids, vectors = blobs([4, 4])
    result = assign(ids, vectors, [("A", ["gone"])], cluster_size=4, seed=5)
    assert result.fresh and [members for _, members in result.clusters] == [tuple(c) for c in fresh_clusters(ids, vectors, 4, 5)]


def test_centrality_orders_members_by_closeness_to_the_centroid():
    ids, vectors = blobs([5])
    by_id = dict(zip(ids, vectors))
    order = centrality(ids, by_id)
    middle = unit_rows(vectors.sum(axis=0, keepdims=True))[0]
    assert [float(by_id[i] @ middle) for i in order] == sorted((float(v @ middle) for v in vectors), reverse=True)


def test_chains_join_at_the_lowest_common_ancestor():
    assert join_chains(["a", "p", "root"], ["b", "p", "root"]) == ["a", "p", "b"]
    assert join_chains(["a", "p", "q", "root"], ["b", "r", "root"]) == ["a", "p", "q", "root", "r", "b"]
    assert join_chains(["a", "p"], ["b", "r"]) == ["a", "p", "r", "b"]  # no common ancestor: both whole chains
    assert join_chains(["p", "root"], ["a", "p", "root"]) == ["p", "a"]  # an aggregate and a member below it


def test_clustering_the_same_nodes_again_keeps_every_cluster():
    # k-means leaves uneven clusters; the first build must already keep the bounds the next build's
    # assignment applies, or a repeat build of unchanged documents splits clusters and pays for new summaries
    # a tight crowd beside scattered points: k-means++ spends its centres on the scattered ones
    rng = np.random.default_rng(7)
    crowd = unit_rows(rng.normal(size=(1, 16))) + 0.01 * rng.normal(size=(60, 16))
    vectors = unit_rows(np.concatenate([crowd, rng.normal(size=(40, 16))]))
    ids = [f"n{i:03d}" for i in range(len(vectors))]
    first = fresh_clusters(ids, vectors, cluster_size=8, seed=0)
    assert all(2 <= len(c) <= 16 for c in first) and sorted(m for c in first for m in c) == ids
    again = assign(ids, vectors, [(f"k{i}", c) for i, c in enumerate(first)], cluster_size=8, seed=0)
    assert (again.split, again.assigned) == (0, 0)
    assert [key for key, _ in again.clusters] == [f"k{i}" for i in range(len(first))]


def test_coinciding_vectors_are_still_cut_to_size():
    ids = [f"n{i:02d}" for i in range(40)]
    vectors = unit_rows(np.ones((40, 4)))
    clusters = fresh_clusters(ids, vectors, cluster_size=5, seed=0)
    assert all(2 <= len(c) <= 10 for c in clusters) and sorted(m for c in clusters for m in c) == ids
