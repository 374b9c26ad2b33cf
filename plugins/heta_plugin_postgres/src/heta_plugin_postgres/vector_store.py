"""``[stores.vector] type = "postgres"``: collections as pgvector tables, cosine, filters in SQL.

Each collection (``chunks``, and the graph plugin's ``graph_entities`` /
``graph_relations``) is one table ``vec_<name>`` in the knowledge base's schema:
``id text primary key, embedding vector(d), metadata jsonb``; the list of
collections and their dimension sits in ``vector_collections``. Vectors are
stored normalised, so cosine distance (``<=>``) ranks them and ``1 - distance`` is
the cosine similarity the protocol returns.

Filters are SQL: a key matches a JSON value exactly (``metadata -> key = value``,
types kept: ``1`` is not ``"1"``), a list means any of them, ``id`` matches the
record id. An HNSW index (default) is built as rows arrive; an IVFFlat index needs
data to place its lists, so it is built on ``flush()`` once a collection holds
``ivf_min_rows`` rows (exact scans until then). Filtered searches use pgvector's
iterative index scans so a selective filter still fills ``top_k``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import numpy as np
from heta_framework.common.validators import positive_whole_number
from heta_framework.kb.stores import StoreType, VectorHit
from psycopg import sql

from heta_plugin_postgres.connection import PostgresDatabase, PostgresOptions, open_database
from heta_plugin_postgres.filters import filter_clause

INDEX_KINDS = ("hnsw", "ivfflat")
REGISTRY_TABLE = "vector_collections"


def _index_kind(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if value not in INDEX_KINDS:
        raise ValueError(f"index must be one of {', '.join(INDEX_KINDS)}, got {value!r}")


@attrs.frozen
class PostgresVectorConfig(PostgresOptions):
    """Options of the pgvector store (plus the connection options every postgres store takes).

    ``index``: ``"hnsw"`` (default) or ``"ivfflat"``, fixed when a collection is created.
    HNSW: ``hnsw_m`` links per node, ``ef_construction`` build beam, ``ef_search``
    query beam (raised to ``top_k`` when smaller). IVFFlat: ``ivf_lists`` lists,
    ``ivf_probes`` lists visited per query, ``ivf_min_rows`` rows before the index
    is built (0 = ``39 * ivf_lists``).
    """

    index: str = attrs.field(default="hnsw", validator=_index_kind)
    hnsw_m: int = attrs.field(default=16, validator=positive_whole_number)
    ef_construction: int = attrs.field(default=64, validator=positive_whole_number)
    ef_search: int = attrs.field(default=100, validator=positive_whole_number)
    ivf_lists: int = attrs.field(default=100, validator=positive_whole_number)
    ivf_probes: int = attrs.field(default=10, validator=positive_whole_number)
    ivf_min_rows: int = 0

    @property
    def ivf_threshold(self) -> int:
        return self.ivf_min_rows if self.ivf_min_rows > 0 else 39 * self.ivf_lists


def collection_table(name: str) -> str:
    """``vec_<name>`` when ``name`` is a plain identifier, else a slug plus a hash (always a safe identifier)."""
    if re.fullmatch(r"[a-z0-9_]{1,40}", name):
        return f"vec_{name}"
    slug = re.sub(r"[^a-z0-9_]+", "_", name.lower())[:30]
    return f"vec_{slug}_{hashlib.sha256(name.encode()).hexdigest()[:10]}"


def vector_literal(row: np.ndarray) -> str:
    # pgvector's text form is a JSON array; repr-exact floats keep float32 values unchanged
    return json.dumps(row.tolist())


def normalised(vectors: Any, dimension: int) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim == 1:
        array = array.reshape(1, -1)
    if array.shape[1] != dimension:
        raise ValueError(f"vectors have dimension {array.shape[1]}, the collection has {dimension}")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    return array / np.where(norms == 0, 1.0, norms)


class PostgresVectorCollection:
    def __init__(self, database: PostgresDatabase, config: PostgresVectorConfig, name: str, dimension: int, index: str):
        self._database = database
        self._config = config
        self._name = name
        self._dimension = dimension
        self._index = index
        self._table = database.table(collection_table(name))

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def __len__(self) -> int:
        with self._database.connection() as conn:
            return conn.execute(sql.SQL("SELECT count(*) FROM {}").format(self._table)).fetchone()[0]

    def upsert(self, ids: Sequence[str], vectors: Any, metadata: Sequence[Mapping[str, Any]]) -> None:
        ids = [str(i) for i in ids]
        if not ids:
            return
        rows = normalised(vectors, self._dimension)
        if len(rows) != len(ids) or len(metadata) != len(ids):
            raise ValueError(f"upsert got {len(ids)} ids, {len(rows)} vectors and {len(metadata)} metadata")
        # the last of repeated ids wins, as with one upsert per id
        latest = {record_id: i for i, record_id in enumerate(ids)}
        with self._database.connection() as conn:
            conn.execute(
                sql.SQL("CREATE TEMP TABLE heta_vector_batch (id text, embedding text, metadata jsonb) ON COMMIT DROP")
            )
            with conn.cursor().copy("COPY heta_vector_batch (id, embedding, metadata) FROM STDIN") as copy:
                for record_id, i in latest.items():
                    copy.write_row((record_id, vector_literal(rows[i]), json.dumps(dict(metadata[i]))))
            # one statement: readers see the whole batch or none of it
            conn.execute(
                sql.SQL(
                    "INSERT INTO {} (id, embedding, metadata) SELECT id, embedding::vector, metadata "
                    "FROM heta_vector_batch ON CONFLICT (id) DO UPDATE "
                    "SET embedding = EXCLUDED.embedding, metadata = EXCLUDED.metadata"
                ).format(self._table)
            )

    def delete(self, ids: Sequence[str]) -> int:
        if not ids:
            return 0
        with self._database.connection() as conn:
            cursor = conn.execute(sql.SQL("DELETE FROM {} WHERE id = ANY(%s)").format(self._table), ([str(i) for i in ids],))
            return cursor.rowcount

    def delete_where(self, filters: Mapping[str, Any]) -> list[str]:
        clause = filter_clause(filters, ("id",))
        if clause is None or not filters:
            return []
        where, params = clause
        with self._database.connection() as conn:
            rows = conn.execute(
                sql.SQL("DELETE FROM {} WHERE {} RETURNING id").format(self._table, where), params
            ).fetchall()
        return [row[0] for row in rows]

    def contains(self, ids: Sequence[str]) -> list[bool]:
        ids = [str(i) for i in ids]
        if not ids:
            return []
        with self._database.connection() as conn:
            found = {row[0] for row in conn.execute(
                sql.SQL("SELECT id FROM {} WHERE id = ANY(%s)").format(self._table), (ids,)
            )}
        return [i in found for i in ids]

    def get_metadata(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        ids = [str(i) for i in ids]
        if not ids:
            return {}
        with self._database.connection() as conn:
            rows = conn.execute(
                sql.SQL("SELECT id, metadata FROM {} WHERE id = ANY(%s)").format(self._table), (ids,)
            ).fetchall()
        return {record_id: dict(meta) for record_id, meta in rows}

    def search(self, vectors: Any, top_k: int, filters: Mapping[str, Any] | None = None) -> list[list[VectorHit]]:
        queries = normalised(vectors, self._dimension)
        clause = filter_clause(filters, ("id",))
        if clause is None or top_k <= 0:
            return [[] for _ in queries]
        where, params = clause
        statement = sql.SQL(
            "SELECT id, 1 - (embedding <=> %s::vector) AS score, metadata FROM {} WHERE {} "
            "ORDER BY embedding <=> %s::vector LIMIT %s"
        ).format(self._table, where)
        results: list[list[VectorHit]] = []
        with self._database.connection() as conn:
            self._tune(conn, top_k, filtered=bool(filters))
            for query in queries:
                literal = vector_literal(query)
                rows = conn.execute(statement, [literal, *params, literal, int(top_k)]).fetchall()
                results.append([VectorHit(id=r[0], score=float(r[1]), metadata=dict(r[2])) for r in rows])
        return results

    def _tune(self, conn: Any, top_k: int, *, filtered: bool) -> None:
        # SET LOCAL: the pooled connection goes back to the next caller with server defaults
        if self._index == "hnsw":
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(max(self._config.ef_search, top_k)),))
            if filtered:
                conn.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
        else:
            conn.execute("SELECT set_config('ivfflat.probes', %s, true)", (str(self._config.ivf_probes),))
            if filtered:
                conn.execute("SELECT set_config('ivfflat.iterative_scan', 'relaxed_order', true)")

    def ensure_index(self, conn: Any) -> None:
        index_name = sql.Identifier(f"{collection_table(self._name)}_ann")
        if self._index == "hnsw":
            conn.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {} ON {} USING hnsw (embedding vector_cosine_ops) "
                    "WITH (m = {}, ef_construction = {})"
                ).format(index_name, self._table, sql.Literal(self._config.hnsw_m),
                         sql.Literal(self._config.ef_construction))
            )
            return
        count = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(self._table)).fetchone()[0]
        if count >= self._config.ivf_threshold:
            conn.execute(
                sql.SQL(
                    "CREATE INDEX IF NOT EXISTS {} ON {} USING ivfflat (embedding vector_cosine_ops) WITH (lists = {})"
                ).format(index_name, self._table, sql.Literal(self._config.ivf_lists))
            )


class PostgresVectorStore:
    """``VectorStoreProtocol`` on pgvector: nothing on local disk, every write committed when it returns."""

    def __init__(self, database: PostgresDatabase, config: PostgresVectorConfig):
        self._database = database
        self._config = config
        self._registry = database.table(REGISTRY_TABLE)
        database.ensure_vector_extension()
        with database.connection() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"heta-vectors:{database.schema}",))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} (name text PRIMARY KEY, dimension integer NOT NULL, "
                    "index_kind text NOT NULL)"
                ).format(self._registry)
            )

    @classmethod
    def open(cls, config: PostgresVectorConfig | None, root: Path) -> PostgresVectorStore:
        config = config or PostgresVectorConfig()
        return cls(open_database(config, root), config)

    def collection(self, name: str, dimension: int | None = None) -> PostgresVectorCollection:
        with self._database.connection() as conn:
            row = conn.execute(
                sql.SQL("SELECT dimension, index_kind FROM {} WHERE name = %s").format(self._registry), (name,)
            ).fetchone()
            if row is not None:
                if dimension is not None and dimension != row[0]:
                    raise ValueError(f"collection {name!r} has dimension {row[0]}, not {dimension}")
                return PostgresVectorCollection(self._database, self._config, name, row[0], row[1])
            if dimension is None:
                raise KeyError(f"no vector collection {name!r}; create it with a dimension first")
            collection = PostgresVectorCollection(self._database, self._config, name, int(dimension), self._config.index)
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"heta-vectors:{self._database.schema}",))
            conn.execute(
                sql.SQL(
                    "CREATE TABLE IF NOT EXISTS {} (id text PRIMARY KEY, embedding vector({}) NOT NULL, "
                    "metadata jsonb NOT NULL DEFAULT '{{}}'::jsonb)"
                ).format(collection._table, sql.Literal(int(dimension)))
            )
            conn.execute(
                sql.SQL("INSERT INTO {} (name, dimension, index_kind) VALUES (%s, %s, %s) ON CONFLICT (name) DO NOTHING")
                .format(self._registry),
                (name, int(dimension), self._config.index),
            )
            collection.ensure_index(conn)
            return collection

    def has_collection(self, name: str) -> bool:
        with self._database.connection() as conn:
            return conn.execute(
                sql.SQL("SELECT 1 FROM {} WHERE name = %s").format(self._registry), (name,)
            ).fetchone() is not None

    def drop_collection(self, name: str) -> None:
        with self._database.connection() as conn:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(self._database.table(collection_table(name))))
            conn.execute(sql.SQL("DELETE FROM {} WHERE name = %s").format(self._registry), (name,))

    def relative_paths(self, name: str) -> list[str]:
        return []  # everything is on the server

    def flush(self) -> None:
        # writes are committed as they happen; an IVFFlat index waits for enough rows to place its lists
        with self._database.connection() as conn:
            names = conn.execute(
                sql.SQL("SELECT name, dimension, index_kind FROM {} WHERE index_kind = 'ivfflat'").format(self._registry)
            ).fetchall()
            for name, dimension, kind in names:
                PostgresVectorCollection(self._database, self._config, name, dimension, kind).ensure_index(conn)

    def close(self) -> None:
        pass  # the pool is shared by every store of the process; closed at exit


VECTOR_STORE_TYPE = StoreType(
    "postgres", "vector", PostgresVectorStore.open, PostgresVectorConfig,
    description="pgvector tables on a PostgreSQL server (HNSW or IVFFlat, cosine)",
)
