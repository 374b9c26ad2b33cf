"""``[stores.objects] type = "postgres"``: keyed blobs as ``bytea`` rows of the ``objects`` table.

A key is a relative POSIX path, normalised as the folder store does (``raw/./a`` is
``raw/a``); one with ``..`` or a leading ``/`` is refused. Each put is one
``INSERT ... ON CONFLICT`` statement, so a reader sees the old object or the new
one. ``keys(prefix)`` sorts by ``COLLATE "C"`` (code-point order, Python's
``sorted``), whatever the database's own collation.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from heta_framework.kb.stores import StoreType
from psycopg import sql

from heta_plugin_postgres.connection import PostgresDatabase, PostgresOptions, open_database

TABLE = "objects"


def object_key(key: str) -> str:
    relative = PurePosixPath(key)
    if not key or relative.is_absolute() or ".." in relative.parts:
        raise ValueError(f"object key must be a relative path without '..', got {key!r}")
    return relative.as_posix()


class PostgresObjectStore:
    """``ObjectStoreProtocol`` on one table: ``key text primary key, data bytea``."""

    def __init__(self, database: PostgresDatabase):
        self._database = database
        self._table = database.table(TABLE)
        with database.connection() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"heta-objects:{database.schema}",))
            conn.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} (key text PRIMARY KEY, data bytea NOT NULL)")
                         .format(self._table))

    @classmethod
    def open(cls, config: PostgresOptions | None, root: Path) -> PostgresObjectStore:
        return cls(open_database(config or PostgresOptions(), root))

    def put_bytes(self, key: str, data: bytes) -> None:
        with self._database.connection() as conn:
            conn.execute(
                sql.SQL("INSERT INTO {} (key, data) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET data = EXCLUDED.data")
                .format(self._table),
                (object_key(key), bytes(data)),
            )

    def get_bytes(self, key: str) -> bytes:
        with self._database.connection() as conn:
            row = conn.execute(sql.SQL("SELECT data FROM {} WHERE key = %s").format(self._table),
                               (object_key(key),)).fetchone()
        if row is None:
            raise FileNotFoundError(f"no object {key!r} in {self._database.where} schema {self._database.schema}")
        return bytes(row[0])

    def put_json(self, key: str, value: Any) -> None:
        self.put_bytes(key, json.dumps(value, ensure_ascii=False).encode("utf-8"))

    def get_json(self, key: str) -> Any:
        return json.loads(self.get_bytes(key))

    def exists(self, key: str) -> bool:
        with self._database.connection() as conn:
            return conn.execute(sql.SQL("SELECT 1 FROM {} WHERE key = %s").format(self._table),
                                (object_key(key),)).fetchone() is not None

    def delete(self, key: str) -> None:
        with self._database.connection() as conn:
            conn.execute(sql.SQL("DELETE FROM {} WHERE key = %s").format(self._table), (object_key(key),))

    def keys(self, prefix: str = "") -> Iterator[str]:
        statement = sql.SQL("SELECT key FROM {} ORDER BY key COLLATE \"C\"").format(self._table)
        params: tuple[Any, ...] = ()
        if prefix:
            # one exact key, or everything in the "folder" (raw/ matches raw/a, never rawish/x)
            folder = object_key(prefix).rstrip("/")
            statement = sql.SQL(
                "SELECT key FROM {} WHERE key = %s OR starts_with(key, %s) ORDER BY key COLLATE \"C\""
            ).format(self._table)
            params = (folder, folder + "/")
        with self._database.connection() as conn:
            rows = conn.execute(statement, params).fetchall()
        yield from (row[0] for row in rows)

    def flush(self) -> None:
        pass  # every put is committed when it returns

    def close(self) -> None:
        pass  # the pool is shared by every store of the process; closed at exit


OBJECT_STORE_TYPE = StoreType(
    "postgres", "objects", PostgresObjectStore.open, PostgresOptions,
    description="bytea rows keyed by path on a PostgreSQL server",
)
