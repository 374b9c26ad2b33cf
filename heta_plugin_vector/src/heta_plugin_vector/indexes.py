"""FAISS index construction, persistence and the small operations that differ by index kind.

Every index uses inner product on L2-normalised vectors (= cosine similarity)
and carries our int64 keys:

* ``flat`` — ``IndexIDMap2(IndexFlatIP)``: exact; supports removal.
* ``hnsw`` — ``IndexIDMap2(IndexHNSWFlat)``: FAISS's HNSW cannot remove, so a
  deleted key becomes a tombstone that searches exclude, and the graph is rebuilt
  from the surviving vectors once tombstones pile up.
* ``ivf`` — ``IndexIVFFlat`` with its own ids and a hash-table direct map (so it
  can remove and reconstruct); trained on a sample once there are enough vectors.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import faiss
import numpy as np
from heta_framework.kb.atomic import replacing

from heta_plugin_vector.config import FaissStoreConfig


def normalized(vectors: object, dimension: int | None = None) -> np.ndarray:
    """A C-contiguous float32 ``(n, d)`` copy with unit rows (zero rows stay zero)."""
    array = np.array(vectors, dtype=np.float32, copy=True, order="C")
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2:
        raise ValueError(f"vectors must be a (n, dimension) array, got shape {array.shape}")
    if dimension is not None and array.shape[1] != dimension:
        raise ValueError(f"vectors have dimension {array.shape[1]}, the collection has {dimension}")
    if len(array):
        faiss.normalize_L2(array)
    return array


#: searches of at most this many query vectors run on one OpenMP thread (a query's own latency, not a batch's)
SINGLE_THREAD_QUERIES = 4


@contextmanager
def single_threaded(enabled: bool = True) -> Iterator[None]:
    """Run FAISS on one OpenMP thread inside the block, in this thread only (OpenMP's setting is per thread).

    A single query vector is too little work to split: on 2 busy cores the OpenMP
    threads spin waiting for each other, and a 10k flat search took 5.4 ms on two
    threads against 1.1 ms on one (bench under load). The previous setting is put
    back, so a build step that later runs in the same worker thread is not slowed.
    """
    if not enabled:
        yield
        return
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def new_flat(dimension: int) -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))


def new_hnsw(dimension: int, config: FaissStoreConfig) -> faiss.Index:
    hnsw = faiss.IndexHNSWFlat(dimension, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
    hnsw.hnsw.efConstruction = config.ef_construction
    hnsw.hnsw.efSearch = config.ef_search
    return faiss.IndexIDMap2(hnsw)


def new_ivf(vectors: np.ndarray, config: FaissStoreConfig) -> faiss.Index:
    """An IVF index trained on (a sample of) ``vectors``, empty."""
    dimension = vectors.shape[1]
    quantizer = faiss.IndexFlatIP(dimension)
    ivf = faiss.IndexIVFFlat(quantizer, dimension, config.nlist, faiss.METRIC_INNER_PRODUCT)
    # keep the quantizer alive as long as the index (SWIG does not own it otherwise)
    ivf.own_fields = True
    quantizer.this.disown()
    sample = vectors
    if len(vectors) > config.train_sample:
        rows = np.random.default_rng(0).choice(len(vectors), config.train_sample, replace=False)
        sample = vectors[np.sort(rows)]
    ivf.train(sample)
    ivf.set_direct_map_type(faiss.DirectMap.Hashtable)
    ivf.nprobe = config.nprobe
    return ivf


def kind_of(index: faiss.Index) -> str:
    if isinstance(index, faiss.IndexIVF):
        return "ivf"
    inner = faiss.downcast_index(index.index) if isinstance(index, faiss.IndexIDMap2) else index
    return "hnsw" if isinstance(inner, faiss.IndexHNSW) else "flat"


def stored_keys(index: faiss.Index) -> np.ndarray:
    """Every key held by the index (tombstoned ones included)."""
    if isinstance(index, faiss.IndexIVF):
        invlists = index.invlists
        parts = []
        for list_no in range(index.nlist):
            size = invlists.list_size(list_no)
            if size:
                parts.append(faiss.rev_swig_ptr(invlists.get_ids(list_no), size).copy())
        return np.concatenate(parts).astype(np.int64) if parts else np.empty(0, dtype=np.int64)
    return faiss.vector_to_array(index.id_map).astype(np.int64)


def all_vectors(index: faiss.Index) -> tuple[np.ndarray, np.ndarray]:
    """``(keys, vectors)`` of everything in the index."""
    keys = stored_keys(index)
    if not len(keys):
        return keys, np.empty((0, index.d), dtype=np.float32)
    return keys, reconstruct(index, keys)


def reconstruct(index: faiss.Index, keys: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(index.reconstruct_batch(np.ascontiguousarray(keys, dtype=np.int64)), dtype=np.float32)


def write_index_atomic(index: faiss.Index, path: Path) -> None:
    """Write the index to a temporary file beside ``path``, fsync, rename.

    ``faiss.write_index`` streams straight to the file, so a 1.5 GB index is not
    first copied into a Python bytes object (what ``write_bytes_atomic`` would need).
    """
    with replacing(path) as tmp:
        faiss.write_index(index, str(tmp))


def read_index(path: Path) -> faiss.Index:
    return faiss.read_index(str(path))
