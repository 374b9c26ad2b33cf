"""``[stores.vector] type = "milvus"``: each collection is one Milvus collection, cosine, filters as expressions.

A collection ``chunks`` (or the graph plugin's ``graph_entities`` / ``graph_relations``)
is the Milvus collection ``<prefix>_chunks`` with the fields ``pk`` (digest of the
record id, primary key), ``record_id`` and ``metadata`` (JSON text, kept exactly),
``filter_tokens`` (see :mod:`heta_plugin_milvus.expressions`) and ``vector``.
Vectors are stored normalised and searched with the COSINE metric, so the score is
the cosine similarity the protocol returns. Every collection is created with
``Strong`` consistency: a search sees every write that returned before it, which is
what a build's later steps expect.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from heta_framework.errors import KnowledgeBaseError, RecipeError
from heta_framework.kb.stores import StoreType, VectorHit

from heta_plugin_milvus.config import MilvusVectorConfig
from heta_plugin_milvus.connection import open_client
from heta_plugin_milvus.expressions import (
    PRIMARY_FIELD,
    TOKEN_FIELD,
    filter_expression,
    ids_expression,
    metadata_tokens,
    primary_key,
)

if TYPE_CHECKING:  # pymilvus (with the pandas it loads) is imported where a store opens, not by `heta` commands
    from pymilvus import MilvusClient

VECTOR_FIELD = "vector"
ID_FIELD = "record_id"
METADATA_FIELD = "metadata"
# Milvus limits: a VARCHAR holds 65,535 bytes, an array 4,096 items, a request returns 16,384 rows
MAX_TEXT_BYTES = 65_535
MAX_TOKENS = 4_096
MAX_ROWS = 16_384
# how many primary keys one `pk in [...]` expression lists
KEYS_PER_EXPRESSION = 1_000
_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_]{1,100}$")


def check_collection_name(name: str) -> str:
    """The same names the FAISS store accepts (``chunks``, ``graph_entities``, ``a-b.c``)."""
    if not isinstance(name, str) or not _COLLECTION_NAME.match(name) or ".." in name:
        raise KnowledgeBaseError(
            f"Invalid vector collection name {name!r}: use letters, digits, '_', '-' and '.' (for example 'chunks')."
        )
    return name


def prefix_for(root: Path) -> str:
    """The default prefix: ``heta_`` + the knowledge-base folder's name, made a Milvus name."""
    slug = re.sub(r"[^A-Za-z0-9_]+", "_", Path(root).name).strip("_") or "kb"
    prefix = f"heta_{slug}"
    if len(prefix) > 60:
        prefix = f"{prefix[:51]}_{hashlib.sha256(Path(root).name.encode()).hexdigest()[:8]}"
    return prefix


def milvus_name(prefix: str, name: str) -> str:
    """``<prefix>_<name>``; a name with ``-`` or ``.`` becomes a slug plus a digest (distinct names stay distinct)."""
    check_collection_name(name)
    if _PLAIN_NAME.match(name):
        return f"{prefix}_{name}"
    slug = re.sub(r"[^A-Za-z0-9_]+", "_", name)[:60]
    return f"{prefix}_{slug}_{hashlib.sha256(name.encode()).hexdigest()[:10]}"


def normalised(vectors: Any, dimension: int) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.ndim != 2 or array.shape[1] != dimension:
        raise ValueError(f"vectors have shape {array.shape}, the collection has dimension {dimension}")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.where(norms == 0, 1.0, norms)


def json_text(value: Any) -> str:
    """Compact JSON; non-ASCII kept as is unless it holds lone surrogates (which UTF-8 cannot carry)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, separators=(",", ":"))
    return text


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class MilvusVectorCollection:
    def __init__(self, client: MilvusClient, config: MilvusVectorConfig, name: str, milvus: str, dimension: int,
                 index: str):
        self._client = client
        self._config = config
        self._name = name
        self._milvus = milvus
        self._dimension = dimension
        self._index = index

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def __len__(self) -> int:
        rows = self._client.query(self._milvus, filter="", output_fields=["count(*)"], timeout=self._config.timeout)
        return int(rows[0]["count(*)"]) if rows else 0

    def _row(self, record_id: str, vector: np.ndarray, metadata: Mapping[str, Any]) -> dict[str, Any]:
        meta = dict(metadata)
        record = {PRIMARY_FIELD: primary_key(record_id), ID_FIELD: json_text(record_id), METADATA_FIELD: json_text(meta),
                  TOKEN_FIELD: metadata_tokens(meta), VECTOR_FIELD: vector.tolist()}
        if len(record[ID_FIELD].encode()) > MAX_TEXT_BYTES or len(record[METADATA_FIELD].encode()) > MAX_TEXT_BYTES:
            raise KnowledgeBaseError(
                f"vector record {record_id[:80]!r}: its id or metadata is over Milvus's {MAX_TEXT_BYTES:,} bytes "
                "per text field; use smaller chunks (the split step's chunk size) or keep [stores.vector] on FAISS"
            )
        if len(record[TOKEN_FIELD]) > MAX_TOKENS:
            raise KnowledgeBaseError(
                f"vector record {record_id[:80]!r} has {len(record[TOKEN_FIELD])} metadata keys, over Milvus's "
                f"{MAX_TOKENS} per record; keep fewer keys in chunk metadata"
            )
        return record

    def upsert(self, ids: Sequence[str], vectors: Any, metadata: Sequence[Mapping[str, Any]]) -> None:
        ids = [str(i) for i in ids]
        if not ids:
            return
        rows = normalised(vectors, self._dimension)
        if len(rows) != len(ids) or len(metadata) != len(ids):
            raise ValueError(f"upsert got {len(ids)} ids, {len(rows)} vectors and {len(metadata)} metadata")
        # the last of repeated ids wins, as with one upsert per id (Milvus refuses a batch with a repeated key)
        latest = {record_id: i for i, record_id in enumerate(ids)}
        records = [self._row(record_id, rows[i], metadata[i]) for record_id, i in latest.items()]
        for batch in _chunks(records, self._config.batch_size):
            self._client.upsert(self._milvus, list(batch), timeout=self._config.timeout)

    def _existing(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """``primary key -> row`` for the ids that are stored."""
        found: dict[str, dict[str, Any]] = {}
        keys = sorted({primary_key(str(i)) for i in ids})
        for batch in _chunks(keys, KEYS_PER_EXPRESSION):
            for row in self._client.query(self._milvus, filter=ids_expression(batch),
                                          output_fields=[PRIMARY_FIELD, ID_FIELD, METADATA_FIELD],
                                          timeout=self._config.timeout):
                found[row[PRIMARY_FIELD]] = row
        return found

    def delete(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        existing = sorted(self._existing(ids))
        for batch in _chunks(existing, KEYS_PER_EXPRESSION):
            self._client.delete(self._milvus, ids=list(batch), timeout=self._config.timeout)
        return len(existing)

    def delete_where(self, filters: Mapping[str, Any]) -> list[str]:
        expression = filter_expression(filters)
        if not filters or not expression:
            return []
        removed: list[str] = []
        # a query returns at most MAX_ROWS rows: delete page by page until nothing matches
        while True:
            rows = self._client.query(self._milvus, filter=expression, output_fields=[PRIMARY_FIELD, ID_FIELD],
                                      limit=MAX_ROWS, timeout=self._config.timeout)
            if not rows:
                return removed
            for batch in _chunks([row[PRIMARY_FIELD] for row in rows], KEYS_PER_EXPRESSION):
                self._client.delete(self._milvus, ids=list(batch), timeout=self._config.timeout)
            removed.extend(json.loads(row[ID_FIELD]) for row in rows)

    def contains(self, ids: Sequence[str]) -> list[bool]:
        ids = [str(i) for i in ids]
        if not ids:
            return []
        existing = self._existing(ids)
        return [primary_key(i) in existing for i in ids]

    def get_metadata(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        return {json.loads(row[ID_FIELD]): json.loads(row[METADATA_FIELD]) for row in self._existing(ids).values()}

    def _search_params(self, top_k: int) -> dict[str, Any]:
        if self._index == "HNSW":
            return {"metric_type": "COSINE", "params": {"ef": max(self._config.ef_search, top_k)}}
        if self._index == "IVF_FLAT":
            return {"metric_type": "COSINE", "params": {"nprobe": self._config.ivf_nprobe}}
        return {"metric_type": "COSINE", "params": {}}

    def search(self, vectors: Any, top_k: int, filters: Mapping[str, Any] | None = None) -> list[list[VectorHit]]:
        queries = normalised(vectors, self._dimension)
        expression = filter_expression(filters)
        if expression is None or top_k <= 0 or len(queries) == 0:
            return [[] for _ in queries]
        limit = min(int(top_k), MAX_ROWS)
        answers = self._client.search(
            self._milvus, data=[q.tolist() for q in queries], filter=expression, limit=limit,
            output_fields=[ID_FIELD, METADATA_FIELD, VECTOR_FIELD], search_params=self._search_params(limit),
            anns_field=VECTOR_FIELD, timeout=self._config.timeout,
        )
        results: list[list[VectorHit]] = []
        for query, hits in zip(queries, answers, strict=True):
            if not hits:
                results.append([])
                continue
            # Milvus's distance moves in the last bits once a segment is indexed (another kernel): the score
            # is the cosine recomputed from the stored vector, the same before and after a reopen
            stored = np.asarray([hit["entity"][VECTOR_FIELD] for hit in hits], dtype=np.float32)
            scores = stored @ query
            row = [
                VectorHit(id=json.loads(hit["entity"][ID_FIELD]), score=float(score),
                          metadata=json.loads(hit["entity"][METADATA_FIELD]))
                for hit, score in zip(hits, scores, strict=True)
            ]
            # best first; equal scores by id, so one query always lists its hits in one order
            row.sort(key=lambda h: (-h.score, h.id))
            results.append(row)
        return results


class MilvusVectorStore:
    """``VectorStoreProtocol`` on Milvus (Lite file or server); collections named ``<prefix>_<name>``."""

    def __init__(self, client: MilvusClient, config: MilvusVectorConfig, prefix: str, kb_root: Path):
        self._client = client
        self._config = config
        self._prefix = prefix
        self._kb_root = kb_root
        self._collections: dict[str, MilvusVectorCollection] = {}
        self._lock = threading.Lock()

    @classmethod
    def open(cls, config: MilvusVectorConfig | None, root: Path) -> MilvusVectorStore:
        config = config or MilvusVectorConfig()
        return cls(open_client(config, root), config, config.collection_prefix or prefix_for(root), Path(root))

    def _create(self, milvus: str, dimension: int) -> None:
        from pymilvus import DataType

        schema = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field(PRIMARY_FIELD, DataType.VARCHAR, is_primary=True, max_length=32)
        schema.add_field(ID_FIELD, DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
        schema.add_field(METADATA_FIELD, DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
        schema.add_field(TOKEN_FIELD, DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=MAX_TOKENS,
                         max_length=32)
        schema.add_field(VECTOR_FIELD, DataType.FLOAT_VECTOR, dim=dimension)
        index = self._client.prepare_index_params()
        params: dict[str, Any] = {}
        if self._config.index == "HNSW":
            params = {"M": self._config.hnsw_m, "efConstruction": self._config.ef_construction}
        elif self._config.index == "IVF_FLAT":
            params = {"nlist": self._config.ivf_nlist}
        index.add_index(VECTOR_FIELD, index_type=self._config.index, metric_type="COSINE", params=params)
        self._client.create_collection(milvus, schema=schema, index_params=index, consistency_level="Strong",
                                       timeout=self._config.timeout)

    def _describe(self, milvus: str) -> tuple[int, str]:
        """The dimension and index type of an existing collection."""
        description = self._client.describe_collection(milvus, timeout=self._config.timeout)
        dimension = next(int(f["params"]["dim"]) for f in description["fields"] if f["name"] == VECTOR_FIELD)
        index = self._client.describe_index(milvus, VECTOR_FIELD, timeout=self._config.timeout)
        return dimension, str(index.get("index_type", "AUTOINDEX"))

    def collection(self, name: str, dimension: int | None = None) -> MilvusVectorCollection:
        milvus = milvus_name(self._prefix, name)
        with self._lock:
            opened = self._collections.get(name)
            if opened is None and self._client.has_collection(milvus, timeout=self._config.timeout):
                stored, index = self._describe(milvus)
                # a reopened collection must be loaded before it answers
                self._client.load_collection(milvus, timeout=self._config.timeout)
                opened = MilvusVectorCollection(self._client, self._config, name, milvus, stored, index)
            if opened is not None:
                if dimension is not None and int(dimension) != opened.dimension:
                    raise KnowledgeBaseError(
                        f"vector collection {name!r} has dimension {opened.dimension}, not {dimension}: the embedding "
                        "model changed; rebuild the knowledge base (or drop the collection) to use the new one"
                    )
                self._collections[name] = opened
                return opened
            if dimension is None:
                raise KeyError(f"no vector collection {name!r}; create it with a dimension first")
            if int(dimension) < 1:
                raise RecipeError(f"vector collection {name!r}: dimension must be at least 1, got {dimension}")
            self._create(milvus, int(dimension))
            opened = MilvusVectorCollection(self._client, self._config, name, milvus, int(dimension), self._config.index)
            self._collections[name] = opened
            return opened

    def has_collection(self, name: str) -> bool:
        return name in self._collections or bool(
            self._client.has_collection(milvus_name(self._prefix, name), timeout=self._config.timeout)
        )

    def drop_collection(self, name: str) -> None:
        milvus = milvus_name(self._prefix, name)
        with self._lock:
            self._collections.pop(name, None)
            if self._client.has_collection(milvus, timeout=self._config.timeout):
                self._client.drop_collection(milvus, timeout=self._config.timeout)

    def relative_paths(self, name: str) -> list[str]:
        # the Lite file holds every collection together: no path belongs to one of them alone
        return []

    def flush(self) -> None:
        # seal what was written so a reopened file (or another server client) reads it from storage
        for collection in list(self._collections.values()):
            self._client.flush(collection._milvus, timeout=self._config.timeout)

    def close(self) -> None:
        self._collections.clear()
        self._client.close()


VECTOR_STORE_TYPE = StoreType(
    "milvus", "vector", MilvusVectorStore.open, MilvusVectorConfig,
    description="Milvus collections (Milvus Lite file in the knowledge base, or a server/cluster uri), cosine",
)
