"""A search of one or a few query vectors runs FAISS on one OpenMP thread, with the same hits, and puts the setting back."""

from __future__ import annotations

import faiss
import numpy as np
from heta_plugin_vector.collection import FaissCollection
from heta_plugin_vector.config import FaissStoreConfig

from heta_plugin_vector import indexes


def test_single_threaded_is_scoped_and_changes_no_result(tmp_path):
    rng = np.random.default_rng(0)
    collection = FaissCollection(tmp_path / "c", "c", FaissStoreConfig(), dimension=32)
    collection.upsert([f"v{i}" for i in range(2000)], rng.normal(size=(2000, 32)), [{"n": i} for i in range(2000)])
    query = rng.normal(size=(1, 32))
    before = faiss.omp_get_max_threads()
    with indexes.single_threaded():
        assert faiss.omp_get_max_threads() == 1
        inside = collection.search(query, 25)[0]
    assert faiss.omp_get_max_threads() == before
    seen: list[int] = []
    original = collection._index_search

    def watched(*args, **kwargs):
        seen.append(faiss.omp_get_max_threads())
        return original(*args, **kwargs)

    collection._index_search = watched
    alone = collection.search(query, 25)[0]
    batch = collection.search(np.vstack([query, rng.normal(size=(indexes.SINGLE_THREAD_QUERIES, 32))]), 25)
    assert seen == [1, before]  # one query: one thread; a bigger batch keeps every thread
    assert [(h.id, h.score) for h in alone] == [(h.id, h.score) for h in inside]
    assert [(h.id, h.score) for h in batch[0]] == [(h.id, h.score) for h in alone]  # as on every thread
    assert faiss.omp_get_max_threads() == before
    collection.close()
