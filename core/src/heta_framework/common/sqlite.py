"""How every Heta SQLite file is opened: one connection, WAL, explicit transactions.

Autocommit mode (``isolation_level=None``) plus ``BEGIN``/``COMMIT`` written by
the caller keeps each logical change in one transaction; WAL lets readers go on
while a build writes.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def open_database(path: Path, schema: str = "") -> sqlite3.Connection:
    """Open (creating folders and ``schema`` as needed) a database shared across threads behind a lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if schema:
        db.executescript(schema)
    return db


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN`` ... ``COMMIT``, or ``ROLLBACK`` on any error (KeyboardInterrupt included)."""
    db.execute("BEGIN")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


class ReaderConnections:
    """One read-only connection per thread to a WAL database, beside its writer connection.

    A single connection shared behind a lock makes concurrent queries take turns;
    with one connection per thread they run at once (WAL readers never block each
    other or the writer, and sqlite3 releases the GIL while a statement runs).
    ``query_only`` makes sure a reader never writes. A connection whose thread has
    ended is closed when the next one opens, so short-lived threads leak nothing.
    """

    def __init__(self, path: Path):
        self._path = path
        self._local = threading.local()
        self._lock = threading.Lock()
        self._by_thread: dict[threading.Thread, sqlite3.Connection] = {}
        self._closed = False

    def get(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is not None and not self._closed:
            return db
        with self._lock:
            if self._closed:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            for thread in [t for t in self._by_thread if not t.is_alive()]:
                self._by_thread.pop(thread).close()
            db = sqlite3.connect(self._path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA query_only=ON")
            self._by_thread[threading.current_thread()] = db
        self._local.db = db
        return db

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for db in self._by_thread.values():
                db.close()
            self._by_thread.clear()


@contextmanager
def read_snapshot(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A read transaction: several statements see one committed state (WAL), none of a later write."""
    db.execute("BEGIN")
    try:
        yield db
    finally:
        db.execute("COMMIT")


def json_key_in(column: str, key: str, values: list) -> tuple[str, list]:
    """A condition "the JSON object in ``column`` has ``key`` with one of ``values``", and its parameters.

    A plain key becomes a ``json_extract`` path (fast). SQLite cannot address a
    key holding a quote, backslash or control character with a path, so such a key
    is matched through ``json_each`` instead. Either way the key is a parameter.
    """
    marks = ",".join("?" * len(values))
    if any(ch in key for ch in '"\\') or any(ord(ch) < 0x20 for ch in key):
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.key = ? AND json_each.value IN ({marks}))", [key, *values]
    return f"json_extract({column}, ?) IN ({marks})", ['$."' + key + '"', *values]
