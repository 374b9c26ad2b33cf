"""The FAISS store on real FAISS and SQLite files: ids, metadata, filters, persistence, index kinds."""

from __future__ import annotations

import json

import numpy as np
import pytest
from heta_framework.errors import KnowledgeBaseError
from heta_framework.kb.stores import VectorCollectionProtocol, VectorStoreProtocol

from heta_plugin_vector import FaissStoreConfig, FaissVectorStore


def _meta(i: int) -> dict:
    return {"document_id": f"doc{i % 4}", "source": f"/data/{i % 2}.txt", "chunk_index": i, "lang": "en" if i % 3 else "zh", "draft": i % 2 == 0}


def _fill(collection, vectors):
    ids = [f"c{i}" for i in range(len(vectors))]
    collection.upsert(ids, vectors, [_meta(i) for i in range(len(vectors))])
    return ids


def _exact_top(vectors, query, k, mask=None):
    scores = vectors @ query
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return [f"c{i}" for i in np.argsort(-scores)[:k] if np.isfinite(scores[i])]


def test_store_satisfies_the_core_protocols(tmp_path):
    store = FaissVectorStore.open(None, tmp_path)
    assert isinstance(store, VectorStoreProtocol)
    assert isinstance(store.collection("chunks", dimension=4), VectorCollectionProtocol)


def test_cosine_search_upsert_and_delete_by_id(tmp_path, clustered):
    vectors = clustered(500)
    collection = FaissVectorStore.open(None, tmp_path).collection("chunks", dimension=32)
    _fill(collection, vectors * 3.0)  # unnormalised input: the store normalises
    assert len(collection) == 500
    hits = collection.search(vectors[7], top_k=5)[0]
    assert [h.id for h in hits] == _exact_top(vectors, vectors[7], 5)
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[0].metadata == _meta(7)

    collection.upsert(["c7"], -vectors[7:8], [{"document_id": "moved"}])  # replace vector and metadata
    assert len(collection) == 500
    assert collection.search(vectors[7], top_k=1)[0][0].id != "c7"
    assert collection.get_metadata(["c7"]) == {"c7": {"document_id": "moved"}}

    assert collection.delete(["c1", "c2", "missing"]) == 2
    assert collection.contains(["c1", "c3", "missing"]) == [False, True, False]
    assert all(h.id not in {"c1", "c2"} for h in collection.search(vectors[1], top_k=10)[0])
    assert len(collection) == 498


def test_filters_match_metadata_and_lists_mean_any_of(tmp_path, clustered):
    vectors = clustered(400)
    collection = FaissVectorStore.open(None, tmp_path).collection("chunks", dimension=32)
    _fill(collection, vectors)
    query = vectors[11]
    document = np.array([i % 4 == 1 for i in range(400)])
    assert [h.id for h in collection.search(query, 10, {"document_id": "doc1"})[0]] == _exact_top(vectors, query, 10, document)
    either = np.array([i % 4 in (1, 2) for i in range(400)])
    assert [h.id for h in collection.search(query, 10, {"document_id": ["doc1", "doc2"]})[0]] == _exact_top(vectors, query, 10, either)
    combined = collection.search(query, 50, {"lang": "zh", "draft": True, "source": "/data/0.txt"})[0]
    assert combined and all(h.metadata["lang"] == "zh" and h.metadata["draft"] and h.metadata["source"] == "/data/0.txt" for h in combined)
    assert collection.search(query, 5, {"document_id": "nobody"}) == [[]]
    assert collection.search(query, 5, {"no_such_key": "x"}) == [[]]


@pytest.mark.parametrize("index", ["flat", "hnsw", "ivf"])
def test_large_filtered_sets_use_the_index_selector_with_the_same_answer(tmp_path, clustered, index):
    vectors = clustered(3000)
    exact = FaissVectorStore.open(FaissStoreConfig(index=index, nlist=16, nprobe=16, train_threshold=1000), tmp_path / "a")
    selector = FaissVectorStore.open(
        FaissStoreConfig(index=index, nlist=16, nprobe=16, train_threshold=1000, filter_exact_limit=10), tmp_path / "b"
    )
    for store in (exact, selector):
        _fill(store.collection("chunks", dimension=32), vectors)
    query = vectors[5]
    a = exact.collection("chunks").search(query, 10, {"document_id": "doc1"})[0]
    b = selector.collection("chunks").search(query, 10, {"document_id": "doc1"})[0]
    assert [h.id for h in a] == _exact_top(vectors, query, 10, np.array([i % 4 == 1 for i in range(3000)]))
    assert len(b) == 10 and all(h.metadata["document_id"] == "doc1" for h in b)
    assert len({h.id for h in a} & {h.id for h in b}) >= 8  # approximate indexes may differ a little


def test_a_large_filter_on_a_flat_index_is_exact_through_its_kept_selector(tmp_path, clustered):
    # a caller's readable documents: more ids than LARGE_FILTER, fewer records than filter_exact_limit
    vectors = clustered(2000)
    collection = FaissVectorStore.open(None, tmp_path).collection("chunks", dimension=32)
    _fill(collection, vectors)
    readable = frozenset({"doc1", "doc2", *(f"elsewhere-{i}" for i in range(100))})
    mask = np.array([i % 4 in (1, 2) for i in range(2000)])
    for query in (vectors[5], vectors[6], vectors[5]):  # the second and third reuse the kept selector
        hits = collection.search(query, 10, {"document_id": readable})[0]
        assert [h.id for h in hits] == _exact_top(vectors, query, 10, mask)


def test_delete_where_returns_the_removed_ids(tmp_path, clustered):
    collection = FaissVectorStore.open(None, tmp_path).collection("chunks", dimension=32)
    _fill(collection, clustered(40))
    removed = collection.delete_where({"document_id": ["doc0", "doc3"]})
    assert sorted(removed) == sorted(f"c{i}" for i in range(40) if i % 4 in (0, 3))
    assert len(collection) == 20
    assert all(h.metadata["document_id"] in ("doc1", "doc2") for h in collection.search(clustered(1, seed=3)[0], 40)[0])
    with pytest.raises(ValueError):
        collection.delete_where({})


@pytest.mark.parametrize("index", ["flat", "hnsw", "ivf"])
def test_collections_persist_as_files_and_reopen(tmp_path, clustered, index):
    config = FaissStoreConfig(index=index, nlist=8, train_threshold=200)
    vectors = clustered(300)
    store = FaissVectorStore.open(config, tmp_path)
    _fill(store.collection("chunks", dimension=32), vectors)
    store.collection("graph_entities", dimension=16).upsert(["e1"], np.ones((1, 16)), [{"name": "Shanghai"}])
    store.collection("chunks").delete(["c0"])
    store.close()

    folder = tmp_path / "vectors" / "chunks"
    assert (folder / "index.faiss").exists() and (folder / "metadata.sqlite").exists()
    manifest = json.loads((folder / "collection.json").read_text())
    assert manifest["dimension"] == 32 and manifest["current_index"] == index
    assert not list(folder.glob("*.tmp"))
    assert b"pickle" not in (folder / "collection.json").read_bytes()

    reopened = FaissVectorStore.open(config, tmp_path)
    assert reopened.has_collection("chunks") and reopened.has_collection("graph_entities")
    chunks = reopened.collection("chunks")
    assert len(chunks) == 299 and chunks.index_kind == index
    assert chunks.search(vectors[9], 1)[0][0].id == "c9"
    assert chunks.contains(["c0"]) == [False]
    assert reopened.collection("graph_entities").get_metadata(["e1"]) == {"e1": {"name": "Shanghai"}}
    assert reopened.relative_paths("chunks") == ["vectors/chunks"]
    reopened.drop_collection("graph_entities")
    assert not reopened.has_collection("graph_entities") and not (tmp_path / "vectors" / "graph_entities").exists()


def test_a_released_collection_is_written_forgotten_and_opened_again(tmp_path, clustered):
    """release_collection writes the index and drops the store's hold on it (its memory can go); the next
    collection() reads it back from disk, and a search that still holds the old object keeps working."""
    import gc
    import weakref

    vectors = clustered(200)
    store = FaissVectorStore.open(None, tmp_path)
    held = store.collection("graph_entities", dimension=32)
    _fill(held, vectors)
    assert not (tmp_path / "vectors" / "graph_entities" / "index.faiss").exists()  # unwritten until a flush
    store.release_collection("graph_entities")
    assert (tmp_path / "vectors" / "graph_entities" / "index.faiss").exists()
    assert held.search(vectors[5], 1)[0][0].id == "c5"  # the holder's object still answers
    gone = weakref.ref(held)
    del held
    gc.collect()
    assert gone() is None  # nothing else keeps the index in memory
    reopened = store.collection("graph_entities")
    assert len(reopened) == 200 and reopened.search(vectors[7], 1)[0][0].id == "c7"
    store.release_collection("never_opened")  # nothing to do


def test_ivf_stays_exact_until_it_has_enough_vectors_to_train(tmp_path, clustered):
    collection = FaissVectorStore.open(FaissStoreConfig(index="ivf", nlist=16, nprobe=4, train_threshold=1000), tmp_path).collection(
        "chunks", dimension=32
    )
    vectors = clustered(2000)
    collection.upsert([f"c{i}" for i in range(600)], vectors[:600], [_meta(i) for i in range(600)])
    assert collection.index_kind == "flat"
    collection.upsert([f"c{i}" for i in range(600, 2000)], vectors[600:], [_meta(i) for i in range(600, 2000)])
    assert collection.index_kind == "ivf" and len(collection) == 2000
    assert collection.search(vectors[1500], 1)[0][0].id == "c1500"


@pytest.mark.parametrize("index", ["hnsw", "ivf"])
def test_approximate_indexes_keep_recall_close_to_exact(tmp_path, clustered, index):
    vectors = clustered(5000, dimension=48)
    queries = clustered(50, dimension=48, seed=9)
    config = FaissStoreConfig(index=index, nlist=32, nprobe=8, train_threshold=2000)
    approximate = FaissVectorStore.open(config, tmp_path).collection("chunks", dimension=48)
    approximate.upsert([f"c{i}" for i in range(5000)], vectors, [{} for _ in range(5000)])
    assert approximate.index_kind == index
    found = approximate.search(queries, 10)
    recall = np.mean([len({h.id for h in hits} & set(_exact_top(vectors, q, 10))) / 10 for q, hits in zip(queries, found)])
    assert recall >= 0.9


def test_hnsw_deletes_are_tombstones_until_the_graph_is_rebuilt(tmp_path, clustered):
    config = FaissStoreConfig(index="hnsw")
    store = FaissVectorStore.open(config, tmp_path)
    collection = store.collection("chunks", dimension=32)
    vectors = clustered(1000)
    _fill(collection, vectors)
    collection.delete([f"c{i}" for i in range(100)])  # 10 %: tombstones
    assert len(collection) == 900
    assert all(int(h.id[1:]) >= 100 for h in collection.search(vectors[:100], 5)[0])
    collection.delete([f"c{i}" for i in range(100, 300)])  # 30 %: rebuilt without them
    assert len(collection) == 700 and collection._index.ntotal == 700
    store.close()
    reopened = FaissVectorStore.open(config, tmp_path).collection("chunks")
    assert len(reopened) == 700 and reopened.search(vectors[500], 1)[0][0].id == "c500"


def test_a_crash_before_flush_leaves_index_and_metadata_consistent(tmp_path, clustered):
    store = FaissVectorStore.open(None, tmp_path)
    collection = store.collection("chunks", dimension=32)
    vectors = clustered(100)
    _fill(collection, vectors[:50])
    store.flush()
    collection.upsert([f"c{i}" for i in range(50, 100)], vectors[50:], [_meta(i) for i in range(50, 100)])
    # no flush: the process "dies" here with the new rows committed in SQLite but not in index.faiss
    reopened = FaissVectorStore.open(None, tmp_path).collection("chunks")
    assert len(reopened) == 50
    assert reopened.contains(["c10", "c70"]) == [True, False]
    assert reopened.search(vectors[70], 100)[0][-1].id in {f"c{i}" for i in range(50)}


def test_wrong_dimension_and_bad_names_are_explained(tmp_path):
    store = FaissVectorStore.open(None, tmp_path)
    collection = store.collection("chunks", dimension=8)
    with pytest.raises(ValueError, match="dimension 4"):
        collection.upsert(["a"], np.ones((1, 4)), [{}])
    collection.upsert(["a"], np.ones((1, 8)), [{}])
    store.flush()
    with pytest.raises(KnowledgeBaseError, match="embedding model changed"):
        store.collection("chunks", dimension=4)
    with pytest.raises(KnowledgeBaseError, match="Build it first"):
        store.collection("never_built")
    with pytest.raises(KnowledgeBaseError, match="Invalid vector collection name"):
        store.collection("../escape", dimension=8)


def test_config_rejects_unknown_index_kinds():
    with pytest.raises(ValueError, match="flat, hnsw, ivf"):
        FaissStoreConfig(index="lsh")
    assert FaissStoreConfig(index="ivf", nlist=100).ivf_train_threshold == 3900
