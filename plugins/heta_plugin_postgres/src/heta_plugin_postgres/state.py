"""``[stores.state] type = "postgres"``: the knowledge base's own state in its schema on the server.

With it (and every store slot on postgres) a knowledge base is a DSN plus a name:
processes in different working folders, on different machines, see one knowledge base.

- ``state_documents``: the catalog, the removed documents and the run record, one JSON
  text row each, replaced whole by one statement (a reader sees the old value or the new).
- ``state_version``: one counter, bumped in the same transaction as every write, so
  ``version()`` moves exactly when something was committed (and never on a read).
- ``state_cache``: every cache's entries, ``(cache, key) -> bytea``; one transaction per ``put_many``.
- the writer lock: a session-level ``pg_try_advisory_lock`` taken on a connection of its
  own (not from the pool: a pooled connection goes back to the pool, the lock with it). The
  server drops the lock when that session ends, however the holder died (SIGKILL included).
  ``state_writer`` holds who took it (pid, host, since, operation) for messages only:
  ``pg_locks`` decides whether a writer is active.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import logging
import os
import socket
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import psycopg
from heta_framework.kb.documents import DocumentRecord
from heta_framework.kb.lock import PollingWriterLock
from heta_framework.kb.stores import StoreType
from psycopg import sql

from heta_plugin_postgres.connection import PostgresDatabase, PostgresOptions, open_database

log = logging.getLogger(__name__)

DOCUMENTS_TABLE = "state_documents"
VERSION_TABLE = "state_version"
CACHE_TABLE = "state_cache"
WRITER_TABLE = "state_writer"
CATALOG, REMOVED, RUN_RECORD = "catalog", "removed", "run_record"

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS {documents} (name text PRIMARY KEY, body text NOT NULL)",
    "CREATE TABLE IF NOT EXISTS {version} (id boolean PRIMARY KEY DEFAULT true CHECK (id), version bigint NOT NULL)",
    "INSERT INTO {version} (id, version) VALUES (true, 0) ON CONFLICT (id) DO NOTHING",
    "CREATE TABLE IF NOT EXISTS {cache} (cache text NOT NULL, key text NOT NULL, value bytea NOT NULL, "
    "PRIMARY KEY (cache, key))",
    "CREATE TABLE IF NOT EXISTS {writer} (id boolean PRIMARY KEY DEFAULT true CHECK (id), pid integer NOT NULL, "
    "host text NOT NULL, started double precision NOT NULL, operation text NOT NULL)",
)


def lock_key(schema: str) -> int:
    """The advisory-lock key of a knowledge base: a signed 64-bit hash of its schema (locks are per database)."""
    digest = hashlib.sha256(f"heta-writer:{schema}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def describe_holder(holder: Mapping[str, Any]) -> str:
    """``built by PID 123 on host-a since 2026-12-03 20:00:00 UTC``: what a lock error says about its holder."""
    if not holder:
        return "written by another process (it left no record yet)"
    since = datetime.datetime.fromtimestamp(float(holder.get("started", 0)), tz=datetime.UTC)
    # the knowledge base names its operations as past participles: "built", "deleted", ...
    return f"{holder.get('operation', 'written')} by PID {holder.get('pid')} on {holder.get('host')} since {since:%Y-%m-%d %H:%M:%S} UTC"


class PostgresCache:
    """``CacheProtocol`` on the rows of ``state_cache`` whose ``cache`` column is this cache's name."""

    def __init__(self, database: PostgresDatabase, name: str):
        self._database = database
        self._table = database.table(CACHE_TABLE)
        self.name = name

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        unique = list(dict.fromkeys(keys))
        if not unique:
            return {}
        with self._database.connection() as conn:
            rows = conn.execute(sql.SQL("SELECT key, value FROM {} WHERE cache = %s AND key = ANY(%s)").format(self._table),
                                (self.name, unique)).fetchall()
        return {key: bytes(value) for key, value in rows}

    def put_many(self, items: Mapping[str, bytes]) -> None:
        if not items:
            return
        with self._database.connection() as conn, conn.cursor() as cursor:
            cursor.executemany(
                sql.SQL("INSERT INTO {} (cache, key, value) VALUES (%s, %s, %s) "
                        "ON CONFLICT (cache, key) DO UPDATE SET value = EXCLUDED.value").format(self._table),
                [(self.name, key, bytes(value)) for key, value in items.items()],
            )

    def __len__(self) -> int:
        with self._database.connection() as conn:
            row = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE cache = %s").format(self._table), (self.name,)).fetchone()
        return int(row[0]) if row else 0


class PostgresWriterLock(PollingWriterLock):
    """``WriterLockProtocol`` as a session-level advisory lock on a dedicated connection."""

    try_in_thread = True  # each try is a round trip to the server

    def __init__(self, state: PostgresState, operation: str):
        self._state = state
        self.operation = operation
        self.stale_holder: dict[str, Any] | None = None
        self._conn: psycopg.Connection | None = None

    @property
    def held(self) -> bool:
        return self._conn is not None

    @property
    def location(self) -> str:
        return self._state.location

    def describe_holder(self, holder: dict[str, Any]) -> str:
        return describe_holder(holder)

    def _connect(self) -> psycopg.Connection:
        database = self._state.database
        try:
            # the pool's conninfo: the same server as every other statement, on a session of its own
            return psycopg.connect(database.pool.conninfo, autocommit=True, connect_timeout=database.options.connect_timeout,
                                   application_name=f"heta-writer-{self.operation}")
        except psycopg.OperationalError as exc:
            raise database.unavailable(exc) from None

    def _try(self) -> bool:
        conn = self._connect()
        try:
            taken = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._state.lock_key,)).fetchone()
            if not (taken and taken[0]):
                conn.close()
                return False
            writer = self._state.database.table(WRITER_TABLE)
            previous = conn.execute(sql.SQL("SELECT pid, host, started, operation FROM {}").format(writer)).fetchone()
            if previous is not None:
                # we hold the lock, so whoever wrote this row is gone without releasing it
                self.stale_holder = dict(zip(("pid", "host", "started", "operation"), previous, strict=True))
                log.warning("took over the writer lock of %s: %s ended without releasing it",
                            self._state.location, describe_holder(self.stale_holder))
            conn.execute(
                sql.SQL("INSERT INTO {} (id, pid, host, started, operation) VALUES (true, %s, %s, %s, %s) "
                        "ON CONFLICT (id) DO UPDATE SET pid = EXCLUDED.pid, host = EXCLUDED.host, "
                        "started = EXCLUDED.started, operation = EXCLUDED.operation").format(writer),
                (os.getpid(), socket.gethostname(), time.time(), self.operation),
            )
        except psycopg.OperationalError as exc:
            conn.close()
            raise self._state.database.unavailable(exc) from None
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        return True

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            # no row means "released properly"; a killed holder leaves its row for the next one to report
            conn.execute(sql.SQL("DELETE FROM {}").format(self._state.database.table(WRITER_TABLE)))
            conn.execute("SELECT pg_advisory_unlock(%s)", (self._state.lock_key,))
        except psycopg.OperationalError:
            log.warning("the connection holding the writer lock of %s was lost; the server released the lock",
                        self._state.location)
        finally:
            conn.close()

    def holder(self) -> dict[str, Any]:
        """What ``state_writer`` says about the holder (stale after a killed holder, until the next one takes over)."""
        writer = self._state.database.table(WRITER_TABLE)
        with self._state.database.connection() as conn:
            row = conn.execute(sql.SQL("SELECT pid, host, started, operation FROM {}").format(writer)).fetchone()
        return {} if row is None else dict(zip(("pid", "host", "started", "operation"), row, strict=True))


class PostgresState:
    """``KnowledgeBaseState`` in the knowledge base's schema (``namespace``) on a PostgreSQL server."""

    def __init__(self, database: PostgresDatabase):
        self.database = database
        self.lock_key = lock_key(database.schema)
        self._documents = database.table(DOCUMENTS_TABLE)
        self._version = database.table(VERSION_TABLE)
        tables = {"documents": self._documents, "version": self._version,
                  "cache": database.table(CACHE_TABLE), "writer": database.table(WRITER_TABLE)}
        with database.connection() as conn:
            # CREATE TABLE IF NOT EXISTS races between processes: serialise it on a transaction lock
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"heta-state:{database.schema}",))
            for statement in _SCHEMA:
                conn.execute(sql.SQL(statement).format(**tables))

    @classmethod
    def open(cls, config: PostgresOptions | None, root: Path) -> PostgresState:
        return cls(open_database(config or PostgresOptions(), root))

    def __repr__(self) -> str:
        return f"PostgresState({self.location!r})"

    @property
    def location(self) -> str:
        """Where the state lives, for messages: the redacted DSN and the schema (never the password)."""
        return f"{self.database.schema!r} on {self.database.where}"

    # --- catalog, removed documents, run record ---------------------------------------

    def _read(self, name: str) -> Any:
        with self.database.connection() as conn:
            row = conn.execute(sql.SQL("SELECT body FROM {} WHERE name = %s").format(self._documents), (name,)).fetchone()
        return None if row is None else json.loads(row[0])

    def _write(self, name: str, value: Any) -> None:
        body = json.dumps(value, ensure_ascii=False)
        with self.database.connection() as conn:  # one transaction: the value and the version move together
            conn.execute(sql.SQL("INSERT INTO {} (name, body) VALUES (%s, %s) "
                                 "ON CONFLICT (name) DO UPDATE SET body = EXCLUDED.body").format(self._documents), (name, body))
            conn.execute(sql.SQL("UPDATE {} SET version = version + 1").format(self._version))

    def read_catalog(self) -> dict[str, DocumentRecord]:
        data = self._read(CATALOG) or {}
        return {key: DocumentRecord.from_dict(value) for key, value in data.items()}

    def write_catalog(self, records: Mapping[str, DocumentRecord]) -> None:
        self._write(CATALOG, {key: attrs.asdict(value) for key, value in records.items()})

    def read_removed(self) -> dict[str, dict[str, Any]]:
        return self._read(REMOVED) or {}

    def write_removed(self, removed: Mapping[str, Mapping[str, Any]]) -> None:
        self._write(REMOVED, {key: dict(value) for key, value in removed.items()})

    def read_run_record(self) -> dict[str, Any] | None:
        return self._read(RUN_RECORD)

    def write_run_record(self, data: Mapping[str, Any]) -> None:
        self._write(RUN_RECORD, dict(data))

    def clear_run_record(self) -> None:
        with self.database.connection() as conn:
            conn.execute(sql.SQL("DELETE FROM {} WHERE name = %s").format(self._documents), (RUN_RECORD,))
            conn.execute(sql.SQL("UPDATE {} SET version = version + 1").format(self._version))

    def version(self) -> int:
        with self.database.connection() as conn:
            row = conn.execute(sql.SQL("SELECT version FROM {}").format(self._version)).fetchone()
        return int(row[0]) if row else 0

    # --- writer lock -----------------------------------------------------------------

    def writer_lock(self, operation: str) -> PostgresWriterLock:
        return PostgresWriterLock(self, operation)

    def writer_active(self) -> bool:
        """Whether any session of this database holds the lock (``pg_locks``: a bigint key is classid, objid, objsubid 1)."""
        unsigned = self.lock_key & 0xFFFFFFFFFFFFFFFF
        with self.database.connection() as conn:
            row = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
                "AND classid::bigint = %s AND objid::bigint = %s AND objsubid = 1)",
                (unsigned >> 32, unsigned & 0xFFFFFFFF),
            ).fetchone()
        return bool(row and row[0])

    # --- caches ----------------------------------------------------------------------

    def cache(self, name: str) -> PostgresCache:
        if not name.isidentifier():
            raise ValueError(f"A cache name is a plain identifier (letters, digits, _), got {name!r}.")
        return PostgresCache(self.database, name)

    def close(self) -> None:
        pass  # reads and writes borrow from the process's shared pool (closed at exit); a held lock closes on release


STATE_STORE_TYPE = StoreType(
    "postgres", "state", PostgresState.open, PostgresOptions,
    description="catalog, run record and caches in the knowledge base's schema on PostgreSQL; advisory-lock writer lock",
)
