"""One named FAISS collection: vectors in ``index.faiss``, metadata in ``metadata.sqlite``.

Files (``vectors/<collection>/``):

* ``collection.json`` — dimension, requested and current index kind (atomic JSON write);
* ``index.faiss``     — the FAISS index, rewritten with write-temp-then-rename on ``flush()``;
* ``metadata.sqlite`` — string id, ``document_id``, ``source`` and JSON metadata per key.

SQLite commits on every write, the index only on ``flush()`` (the runner flushes
after every step). On open, the two are reconciled: a record without a vector or
a vector without a record (a crash between the two writes) is dropped, so the
step that was running re-adds it when the build resumes.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import faiss
import numpy as np
from heta_framework.errors import KnowledgeBaseError
from heta_framework.kb.atomic import read_json, write_json_atomic
from heta_framework.kb.lock import may_change_stores
from heta_framework.kb.stores import VectorHit

from heta_plugin_vector import indexes
from heta_plugin_vector.config import FaissStoreConfig
from heta_plugin_vector.metadata import MetadataTable

FORMAT_VERSION = 1
#: rebuild an HNSW graph once this share of its nodes are tombstones
_HNSW_REBUILD_SHARE = 0.2
#: a filter with more values than this is matched once per collection state (``_allowed_keys``)
LARGE_FILTER = 64
SELECTED_KEPT = 8


class FaissCollection:
    """Satisfies ``VectorCollectionProtocol``. Thread-safe: one lock per collection."""

    def __init__(self, folder: Path, name: str, config: FaissStoreConfig, dimension: int | None = None, kb_root: Path | None = None):
        self.folder = folder
        self._kb_root = kb_root
        self._name = name
        self._config = config
        self._lock = threading.RLock()
        manifest = read_json(folder / "collection.json")
        if manifest is None:
            if dimension is None:
                raise KnowledgeBaseError(f"No vector collection {name!r} in {folder.parent}. Build it first (step index_vectors).")
            manifest = {"format": FORMAT_VERSION, "name": name, "dimension": int(dimension), "metric": "cosine", "requested_index": config.index}
            folder.mkdir(parents=True, exist_ok=True)
            write_json_atomic(folder / "collection.json", manifest)
        elif dimension is not None and int(dimension) != manifest["dimension"]:
            raise KnowledgeBaseError(
                f"Vector collection {name!r} holds {manifest['dimension']}-d vectors, but {dimension}-d vectors were given. "
                "The embedding model changed: delete the knowledge base's derived data (kb.delete() or `heta delete`) and rebuild, "
                "or drop the collection."
            )
        self._manifest = manifest
        self._dimension: int = manifest["dimension"]
        self._records = MetadataTable(folder / "metadata.sqlite")
        index_path = folder / "index.faiss"
        self._index = indexes.read_index(index_path) if index_path.exists() else self._empty_index()
        self._tombstones: set[int] = set()
        self._dirty = False
        #: large filters -> the record keys they select, until the next write (``_allowed_keys``)
        self._selected: OrderedDict[tuple, tuple[np.ndarray, Any]] = OrderedDict()
        self._reconcile()
        self._next_key = max(self._records.max_key(), int(indexes.stored_keys(self._index).max(initial=-1))) + 1

    # --- protocol: description ---------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def index_kind(self) -> str:
        """The index currently in use (an IVF collection is ``flat`` until it is trained)."""
        return self._kind

    @property
    def _index(self) -> faiss.Index:
        return self._faiss_index

    @_index.setter
    def _index(self, index: faiss.Index) -> None:
        # the kind is looked up once per index, not per search (downcasting costs ~0.1 ms)
        self._faiss_index = index
        self._kind = indexes.kind_of(index)

    def __len__(self) -> int:
        with self._lock:
            return int(self._index.ntotal) - len(self._tombstones)

    # --- protocol: writing ---------------------------------------------------------------

    def upsert(self, ids: Sequence[str], vectors: Any, metadata: Sequence[Mapping[str, Any]]) -> None:
        ids = [str(i) for i in ids]
        if len(set(ids)) != len(ids):
            raise ValueError("upsert got the same id twice in one call")
        array = indexes.normalized(vectors, self._dimension) if len(ids) else np.empty((0, self._dimension), np.float32)
        if not (len(ids) == len(array) == len(metadata)):
            raise ValueError(f"upsert needs as many vectors and metadata as ids: {len(ids)} ids, {len(array)} vectors, {len(metadata)} metadata")
        if not ids:
            return
        with self._lock:
            old = self._records.keys_for_ids(ids)
            if old:
                self._remove_keys(np.fromiter(old.values(), dtype=np.int64))
            keys = np.arange(self._next_key, self._next_key + len(ids), dtype=np.int64)
            self._next_key += len(ids)
            self._records.replace(keys.tolist(), ids, metadata, existing=bool(old))
            self._selected.clear()
            self._index.add_with_ids(array, keys)
            self._dirty = True
            self._maybe_train_ivf()

    def delete(self, ids: Sequence[str]) -> int:
        with self._lock:
            found = self._records.keys_for_ids([str(i) for i in ids])
            self._delete_keys(list(found.values()))
            return len(found)

    def delete_where(self, filters: Mapping[str, Any]) -> list[str]:
        if not filters:
            raise ValueError("delete_where needs at least one filter; use drop_collection to remove everything")
        with self._lock:
            rows = self._records.matching(filters)
            self._delete_keys([key for key, _ in rows])
            return [record_id for _, record_id in rows]

    # --- protocol: reading ---------------------------------------------------------------

    def contains(self, ids: Sequence[str]) -> list[bool]:
        with self._lock:
            found = self._records.keys_for_ids([str(i) for i in ids])
        return [str(i) in found for i in ids]

    def get_metadata(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        with self._lock:
            return self._records.metadata_for_ids([str(i) for i in ids])

    def search(self, vectors: Any, top_k: int, filters: Mapping[str, Any] | None = None) -> list[list[VectorHit]]:
        queries = indexes.normalized(vectors, self._dimension)
        if top_k < 1 or not len(queries):
            return [[] for _ in range(len(queries))]
        with self._lock, indexes.single_threaded(len(queries) <= indexes.SINGLE_THREAD_QUERIES):
            if filters:
                allowed, selector = self._allowed_keys(filters)
                if not len(allowed):
                    return [[] for _ in range(len(queries))]
                # a flat index with a kept selector scans once and skips the rest: cheaper than rebuilding
                # thousands of vectors per query, and as exact; an approximate index keeps the exact path
                # for a small set, which its graph or lists would search poorly
                if len(allowed) <= self._config.filter_exact_limit and not (selector is not None and self.index_kind == "flat"):
                    scores, keys = self._exact_among(queries, allowed, top_k)
                else:
                    scores, keys = self._index_search(queries, top_k, selector or faiss.IDSelectorBatch(allowed))
            elif self._tombstones:
                dead = faiss.IDSelectorBatch(np.fromiter(self._tombstones, dtype=np.int64))
                scores, keys = self._index_search(queries, top_k, faiss.IDSelectorNot(dead), keep=dead)
            else:
                scores, keys = self._index_search(queries, top_k, None)
            records = self._records.by_keys({int(k) for k in keys.ravel() if k >= 0})
        hits: list[list[VectorHit]] = []
        for row_scores, row_keys in zip(scores, keys):
            row = []
            for score, key in zip(row_scores, row_keys):
                record = records.get(int(key))
                if key < 0 or record is None:
                    continue
                row.append(VectorHit(id=record[0], score=float(score), metadata=json.loads(record[1])))
            hits.append(row)
        return hits

    # --- store-facing --------------------------------------------------------------------

    def _may_write(self) -> bool:
        # inside a knowledge base, only its writer (or anyone while no writer runs) touches the files
        return self._kb_root is None or may_change_stores(self._kb_root)

    def flush(self) -> None:
        with self._lock:
            if not self._dirty or not self._may_write():
                return
            indexes.write_index_atomic(self._index, self.folder / "index.faiss")
            self._manifest["current_index"] = self.index_kind
            write_json_atomic(self.folder / "collection.json", self._manifest)
            self._dirty = False

    def close(self) -> None:
        with self._lock:
            self.flush()
            self._records.close()

    def destroy(self) -> None:
        with self._lock:
            self._records.close()
            shutil.rmtree(self.folder, ignore_errors=True)

    # --- internals -----------------------------------------------------------------------

    def _empty_index(self) -> faiss.Index:
        if self._config.index == "hnsw":
            return indexes.new_hnsw(self._dimension, self._config)
        # ivf starts exact and is trained once there are enough vectors
        return indexes.new_flat(self._dimension)

    def _reconcile(self) -> None:
        """Make the index and the metadata table agree (they are written at different moments)."""
        in_index = indexes.stored_keys(self._index)
        in_table = self._records.all_keys()
        orphan_vectors = np.setdiff1d(in_index, in_table, assume_unique=False)
        orphan_records = np.setdiff1d(in_table, in_index, assume_unique=False)
        if not self._may_write():
            # another process is writing: the mismatch may be that writer between its two writes,
            # not crash damage, so repair nothing on disk; only hide vectors without a record from this view
            if len(orphan_vectors):
                self._remove_keys(orphan_vectors)
            return
        if len(orphan_records):
            self._records.delete_keys(orphan_records.tolist())
            self._selected.clear()
        if len(orphan_vectors):
            self._remove_keys(orphan_vectors)
            self._dirty = True

    def _delete_keys(self, keys: Sequence[int]) -> None:
        if not keys:
            return
        self._records.delete_keys(keys)
        self._selected.clear()
        self._remove_keys(np.asarray(keys, dtype=np.int64))
        self._dirty = True

    def _allowed_keys(self, filters: Mapping[str, Any]) -> tuple[np.ndarray, Any]:
        """The keys of the records ``filters`` select, and for a large filter the FAISS selector of them.

        A large filter (a caller's readable documents: thousands of ids) is matched once and kept, with its
        selector, until the next write: the same caller asks again and again.
        """
        size = sum(len(v) if isinstance(v, (list, tuple, set, frozenset)) else 1 for v in filters.values())
        if size <= LARGE_FILTER:
            return np.fromiter((key for key, _ in self._records.matching(filters)), dtype=np.int64), None
        # a frozenset is its own key (a scope hands the same one to every query: hashed once, compared by identity)
        signature = tuple(sorted((str(k), v if isinstance(v, frozenset) else frozenset(v) if isinstance(v, (list, tuple, set)) else v)
                                 for k, v in filters.items()))
        kept = self._selected.get(signature)
        if kept is None:
            allowed = np.fromiter((key for key, _ in self._records.matching(filters)), dtype=np.int64)
            kept = self._selected[signature] = (allowed, faiss.IDSelectorBatch(allowed) if len(allowed) else None)
            while len(self._selected) > SELECTED_KEPT:
                self._selected.popitem(last=False)
        else:
            self._selected.move_to_end(signature)
        return kept

    def _remove_keys(self, keys: np.ndarray) -> None:
        if self.index_kind == "hnsw":
            self._tombstones.update(int(k) for k in keys)
            if len(self._tombstones) > _HNSW_REBUILD_SHARE * max(self._index.ntotal, 1):
                self._rebuild_hnsw()
        elif self.index_kind == "ivf":
            # the IVF hash-table direct map only accepts an array selector
            keys = np.ascontiguousarray(keys, dtype=np.int64)
            self._index.remove_ids(faiss.IDSelectorArray(len(keys), faiss.swig_ptr(keys)))
        else:
            self._index.remove_ids(faiss.IDSelectorBatch(np.ascontiguousarray(keys, dtype=np.int64)))

    def _rebuild_hnsw(self) -> None:
        keys, vectors = indexes.all_vectors(self._index)
        alive = ~np.isin(keys, np.fromiter(self._tombstones, dtype=np.int64))
        fresh = indexes.new_hnsw(self._dimension, self._config)
        if alive.any():
            fresh.add_with_ids(vectors[alive], keys[alive])
        self._index = fresh
        self._tombstones.clear()
        self._dirty = True

    def _maybe_train_ivf(self) -> None:
        if self._config.index != "ivf" or self.index_kind == "ivf" or self._index.ntotal < self._config.ivf_train_threshold:
            return
        keys, vectors = indexes.all_vectors(self._index)
        ivf = indexes.new_ivf(vectors, self._config)
        ivf.add_with_ids(vectors, keys)
        self._index = ivf
        self._dirty = True

    def _search_parameters(self, top_k: int, selector: Any) -> Any:
        kind = self.index_kind
        if kind == "hnsw":
            params = faiss.SearchParametersHNSW()
            params.efSearch = max(self._config.ef_search, top_k)
        elif kind == "ivf":
            params = faiss.SearchParametersIVF()
            params.nprobe = self._config.nprobe
        else:
            if selector is None:
                return None
            params = faiss.SearchParameters()
        if selector is not None:
            params.sel = selector
        return params

    def _index_search(self, queries: np.ndarray, top_k: int, selector: Any, keep: Any = None) -> tuple[np.ndarray, np.ndarray]:
        params = self._search_parameters(top_k, selector)
        if params is None:
            return self._index.search(queries, top_k)
        return self._index.search(queries, top_k, params=params)

    def _exact_among(self, queries: np.ndarray, keys: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
        """Score a small filtered set exactly: reconstruct its vectors, one matrix product."""
        vectors = indexes.reconstruct(self._index, keys)
        scores = queries @ vectors.T
        k = min(top_k, len(keys))
        best = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        best_scores = np.take_along_axis(scores, best, axis=1)
        order = np.argsort(-best_scores, axis=1, kind="stable")
        best = np.take_along_axis(best, order, axis=1)
        return np.take_along_axis(best_scores, order, axis=1), keys[best]
