"""``VectorStoreSuite``: what every ``stores.vector`` backend (``VectorStoreProtocol``) must do."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from heta_framework.contracts.stores import VectorCollectionProtocol, VectorStoreProtocol
from heta_framework.testing.conformance.base import StoreSuiteBase, assert_relative_inside, run_in_threads
from heta_framework.testing.conformance.samples import HOSTILE_STRINGS, UNICODE_TEXTS

DIMENSION = 16


def unit_vectors(n: int, seed: int = 0, dimension: int = DIMENSION) -> np.ndarray:
    rng = np.random.default_rng(seed)
    points = rng.normal(size=(n, dimension))
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return points.astype(np.float32)


def exact_top(vectors: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[str]:
    scores = vectors @ query
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:k]]


class VectorStoreSuite(StoreSuiteBase):
    """Subclass it and provide ``store_factory``: ``root -> store`` (the same store again for the same root).

    Exact-search answers are expected for collections of a few thousand vectors:
    a backend with an approximate index must be configured (in the factory) to
    be exact at that size.
    """

    @staticmethod
    def fill(collection: Any, n: int, seed: int = 0) -> tuple[list[str], np.ndarray]:
        vectors = unit_vectors(n, seed)
        ids = [f"v{i}" for i in range(n)]
        metadata = [{"document_id": f"doc{i % 4}", "index": i, "lang": "zh" if i % 3 == 0 else "en"} for i in range(n)]
        collection.upsert(ids, vectors, metadata)
        return ids, vectors

    # --- shape -------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, store):
        assert isinstance(store, VectorStoreProtocol)
        assert isinstance(store.collection("chunks", dimension=DIMENSION), VectorCollectionProtocol)

    def test_empty_store_and_collection(self, store):
        assert not store.has_collection("chunks")
        collection = store.collection("chunks", dimension=DIMENSION)
        assert store.has_collection("chunks")
        assert collection.name == "chunks" and collection.dimension == DIMENSION and len(collection) == 0
        assert collection.search(unit_vectors(2), top_k=5) == [[], []]
        assert collection.get_metadata(["missing"]) == {}
        assert collection.contains(["missing"]) == [False]
        assert collection.delete(["missing"]) == 0
        assert collection.delete_where({"document_id": "nobody"}) == []

    def test_relative_paths_are_inside_the_knowledge_base(self, store, kb_root):
        self.fill(store.collection("chunks", dimension=DIMENSION), 5)
        store.flush()
        assert_relative_inside(store.relative_paths("chunks"), kb_root, server_backed=self.server_backed)

    # --- writing -----------------------------------------------------------------------

    def test_search_finds_each_vector_first_with_its_metadata(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        ids, vectors = self.fill(collection, 200)
        hits = collection.search(vectors[:10], top_k=3)
        assert len(hits) == 10
        for i, row in enumerate(hits):
            assert [h.id for h in row] == exact_top(vectors, ids, vectors[i], 3)
            assert row[0].score == pytest.approx(1.0, abs=1e-4)
            assert row[0].metadata["index"] == i
            assert [h.score for h in row] == sorted((h.score for h in row), reverse=True)

    def test_vectors_are_normalised_for_cosine(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        vectors = unit_vectors(3)
        collection.upsert(["a", "b", "c"], vectors * 7.5, [{}, {}, {}])
        assert collection.search(vectors[1] * 0.01, top_k=1)[0][0].id == "b"
        assert collection.search(vectors[1], top_k=1)[0][0].score == pytest.approx(1.0, abs=1e-4)

    def test_upsert_replaces_vector_and_metadata_by_id(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        _ids, vectors = self.fill(collection, 50)
        collection.upsert(["v7"], -vectors[7:8], [{"document_id": "moved"}])
        assert len(collection) == 50
        assert collection.get_metadata(["v7"]) == {"v7": {"document_id": "moved"}}
        assert collection.search(-vectors[7], top_k=1)[0][0].id == "v7"
        assert "v7" not in [h.id for h in collection.search(vectors[7], top_k=3)[0]]

    def test_delete_by_id_and_by_filter(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        _ids, vectors = self.fill(collection, 40)
        assert collection.delete(["v1", "v2", "missing"]) == 2
        assert collection.contains(["v1", "v3", "missing"]) == [False, True, False]
        assert len(collection) == 38
        assert all(h.id not in {"v1", "v2"} for h in collection.search(vectors[1], top_k=38)[0])
        gone = collection.delete_where({"document_id": "doc0"})
        assert sorted(gone) == sorted(f"v{i}" for i in range(40) if i % 4 == 0)
        assert len(collection) == 38 - len(gone)
        assert collection.search(vectors[0], top_k=40, filters={"document_id": "doc0"}) == [[]]

    def test_drop_collection_leaves_the_others(self, store):
        self.fill(store.collection("chunks", dimension=DIMENSION), 10)
        other = store.collection("entities", dimension=DIMENSION)
        self.fill(other, 5)
        store.drop_collection("chunks")
        assert not store.has_collection("chunks")
        assert len(store.collection("entities")) == 5

    # --- filters -----------------------------------------------------------------------

    def test_filters_exact_and_list_means_any_of(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        _ids, vectors = self.fill(collection, 120)
        exact = collection.search(vectors[5], top_k=120, filters={"document_id": "doc1"})[0]
        assert {h.id for h in exact} == {f"v{i}" for i in range(120) if i % 4 == 1}
        either = collection.search(vectors[5], top_k=120, filters={"document_id": ["doc1", "doc2"]})[0]
        assert {h.id for h in either} == {f"v{i}" for i in range(120) if i % 4 in (1, 2)}
        both = collection.search(vectors[5], top_k=120, filters={"document_id": "doc0", "lang": "zh"})[0]
        assert {h.id for h in both} == {f"v{i}" for i in range(120) if i % 4 == 0 and i % 3 == 0}
        assert collection.search(vectors[5], top_k=5, filters={"document_id": []}) == [[]]
        assert collection.search(vectors[5], top_k=5, filters={"no_such_key": "x"}) == [[]]
        assert [h.id for h in collection.search(vectors[5], top_k=5, filters={"id": ["v9", "v3"]})[0]] == exact_top(
            vectors[[3, 9]], ["v3", "v9"], vectors[5], 2
        )

    def test_a_long_document_list_follows_every_write(self, store):
        # a caller's readable documents arrive as a filter of thousands of ids, the same one query after query: a
        # backend may remember what it selects, but never past a write
        collection = store.collection("chunks", dimension=DIMENSION)
        _ids, vectors = self.fill(collection, 40)
        readable = frozenset({"doc1", "doc2", *(f"other{i}" for i in range(500))})
        first = {h.id for h in collection.search(vectors[1], top_k=40, filters={"document_id": readable})[0]}
        assert first == {f"v{i}" for i in range(40) if i % 4 in (1, 2)}
        collection.upsert(["new"], vectors[:1], [{"document_id": "other7"}])
        assert "new" in {h.id for h in collection.search(vectors[0], top_k=40, filters={"document_id": readable})[0]}
        collection.delete(["v1", "new"])
        after = {h.id for h in collection.search(vectors[1], top_k=40, filters={"document_id": readable})[0]}
        assert after == first - {"v1"}
        collection.delete_where({"document_id": "doc2"})
        assert {h.id for h in collection.search(vectors[1], top_k=40, filters={"document_id": readable})[0]} == {
            f"v{i}" for i in range(40) if i % 4 == 1 and i != 1}

    def test_filter_values_keep_their_json_types(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        vectors = unit_vectors(4)
        collection.upsert(["a", "b", "c", "d"], vectors, [{"n": 1}, {"n": "1"}, {"flag": True}, {"flag": False}])
        assert {h.id for h in collection.search(vectors[0], 4, {"n": 1})[0]} == {"a"}
        assert {h.id for h in collection.search(vectors[0], 4, {"n": "1"})[0]} == {"b"}
        assert {h.id for h in collection.search(vectors[0], 4, {"flag": False})[0]} == {"d"}

    # --- hostile and unicode input --------------------------------------------------------

    def test_hostile_ids_metadata_and_filter_values(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        vectors = unit_vectors(len(HOSTILE_STRINGS))
        ids = list(HOSTILE_STRINGS)
        collection.upsert(ids, vectors, [{"document_id": s, s: s} for s in HOSTILE_STRINGS])
        assert len(collection) == len(ids)
        for i, text in enumerate(HOSTILE_STRINGS):
            assert collection.get_metadata([text]) == {text: {"document_id": text, text: text}}
            hits = collection.search(vectors[i], top_k=len(ids), filters={"document_id": text})[0]
            assert [h.id for h in hits] == [text]
            assert [h.id for h in collection.search(vectors[i], top_k=1, filters={text: text})[0]] == [text]
        assert collection.delete([HOSTILE_STRINGS[0]]) == 1
        assert collection.contains(ids) == [False] + [True] * (len(ids) - 1)

    def test_unicode_and_cjk_round_trip(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        texts = list(UNICODE_TEXTS.values())
        vectors = unit_vectors(len(texts))
        collection.upsert(texts, vectors, [{"text": t, "lang": lang} for lang, t in UNICODE_TEXTS.items()])
        assert collection.get_metadata(texts) == {t: {"text": t, "lang": lang} for lang, t in UNICODE_TEXTS.items()}
        hits = collection.search(vectors[0], top_k=3, filters={"text": UNICODE_TEXTS["zh"]})[0]
        assert [h.id for h in hits] == [UNICODE_TEXTS["zh"]]

    # --- persistence, size, threads --------------------------------------------------------

    def test_persists_across_reopen(self, store, reopen):
        collection = store.collection("chunks", dimension=DIMENSION)
        _ids, vectors = self.fill(collection, 100)
        collection.delete(["v3"])
        before = collection.search(vectors[:5], top_k=4)
        store = reopen(store)
        assert store.has_collection("chunks")
        again = store.collection("chunks")
        assert again.dimension == DIMENSION and len(again) == 99
        assert again.search(vectors[:5], top_k=4) == before
        assert again.get_metadata(["v10"]) == {"v10": {"document_id": "doc2", "index": 10, "lang": "en"}}

    def test_large_batch(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        ids, vectors = self.fill(collection, 5000, seed=1)
        assert len(collection) == 5000
        assert collection.contains(["v0", "v4999", "v5000"]) == [True, True, False]
        for i in (0, 2500, 4999):
            assert collection.search(vectors[i], top_k=1)[0][0].id == f"v{i}"
        assert len(collection.get_metadata(ids)) == 5000

    def test_concurrent_searches_agree_with_sequential_ones(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        _ids, vectors = self.fill(collection, 500)
        expected = [collection.search(vectors[i : i + 1], top_k=5) for i in range(16)]
        assert run_in_threads(lambda i: collection.search(vectors[i : i + 1], top_k=5), 16) == expected

    def test_readers_see_all_or_nothing_of_a_write(self, store):
        collection = store.collection("chunks", dimension=DIMENSION)
        self.fill(collection, 100)
        fresh = unit_vectors(200, seed=5)
        seen: list[int] = []
        done = threading.Event()

        def read() -> None:
            while not done.is_set():
                seen.append(len(collection))

        reader = threading.Thread(target=read)
        reader.start()
        collection.upsert([f"new{i}" for i in range(200)], fresh, [{} for _ in range(200)])
        done.set()
        reader.join()
        assert set(seen) <= {100, 300}
        assert len(collection) == 300

