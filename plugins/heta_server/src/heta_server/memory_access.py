"""When each chunk was last returned by ``memory_search``, for each set of readers: "retrieval strengthens memory".

Kept in ``memory_access.sqlite`` in the knowledge-base folder, apart from the built
stores: it is state about use, not derived from documents, so a rebuild or ``heta
delete`` keeps it, and readers may write it without the knowledge base's writer lock.
Several processes (a server and CLI queries) may write at once: every update is one
SQLite transaction (WAL, busy timeout) that only ever moves a time forward.

The times are kept apart per principal set (``scope_key``: a hash of the caller's sorted
principals): what one caller reads never changes another's recency, ranking or the
``last_access`` it is shown, so use does not leak between callers. All anonymous callers
share one set (the public one); a knowledge base's times from before access control are
that set's.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from heta_framework.common.sqlite import open_database

ACCESS_FILE = "memory_access.sqlite"


def scope_key(principals: Iterable[str] | None) -> str:
    """The access-log key of a principal set; ``None`` (a query without a scope: the build's own) has its own."""
    if principals is None:
        return "unscoped"
    return hashlib.sha256("\n".join(sorted(set(principals))).encode("utf-8")).hexdigest()


#: anonymous callers (no principals: the public documents)
ANONYMOUS = scope_key(())

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scoped_access (
    scope TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    accessed REAL NOT NULL,
    count INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (scope, chunk_id)
) WITHOUT ROWID;
"""
#: the one table of the access log before it was kept per principal set
_UNSCOPED_TABLE = "last_access"
_BATCH = 500


class AccessLog:
    """Last-access times by principal set and chunk id; safe to share between threads."""

    def __init__(self, path: Path):
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            db = open_database(self.path, _SCHEMA)
            db.execute("PRAGMA busy_timeout=5000")
            _adopt_unscoped_times(db)
            self._db = db
        return self._db

    def last_access(self, chunk_ids: Sequence[str], scope: str = ANONYMOUS) -> dict[str, float]:
        """When ``scope``'s callers last got each chunk back (chunks they never got are absent)."""
        if not self.path.exists():
            return {}  # never written: nothing was accessed, and a read must not create files
        ids = list(dict.fromkeys(chunk_ids))
        found: dict[str, float] = {}
        with self._lock:
            db = self._connection()
            for start in range(0, len(ids), _BATCH):
                part = ids[start : start + _BATCH]
                marks = ",".join("?" * len(part))
                found.update(db.execute(
                    f"SELECT chunk_id, accessed FROM scoped_access WHERE scope = ? AND chunk_id IN ({marks})", [scope, *part]
                ).fetchall())
        return found

    def record(self, chunk_ids: Iterable[str], when: float, scope: str = ANONYMOUS) -> None:
        """Mark ``chunk_ids`` accessed at ``when`` by ``scope``'s callers, in one transaction (an older time never
        overwrites a newer one)."""
        rows = [(scope, chunk_id, when) for chunk_id in dict.fromkeys(chunk_ids)]
        if not rows:
            return
        with self._lock:
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO scoped_access (scope, chunk_id, accessed) VALUES (?, ?, ?) ON CONFLICT(scope, chunk_id) DO UPDATE SET "
                    "accessed = MAX(accessed, excluded.accessed), count = count + 1",
                    rows,
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _adopt_unscoped_times(db: sqlite3.Connection) -> None:
    """Move the times of a log written before it was kept per principal set into the anonymous set, once."""
    if not _has_unscoped_table(db):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if _has_unscoped_table(db):  # another process may have moved them while this one waited for the lock
            db.execute(
                f"INSERT INTO scoped_access (scope, chunk_id, accessed, count) SELECT ?, chunk_id, accessed, count FROM {_UNSCOPED_TABLE} "
                "WHERE true ON CONFLICT(scope, chunk_id) DO UPDATE SET accessed = MAX(accessed, excluded.accessed)",
                [ANONYMOUS],
            )
            db.execute(f"DROP TABLE {_UNSCOPED_TABLE}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _has_unscoped_table(db: sqlite3.Connection) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [_UNSCOPED_TABLE]).fetchone() is not None


_logs: dict[Path, AccessLog] = {}
_logs_lock = threading.Lock()


def access_log(kb_path: Path) -> AccessLog:
    """The one ``AccessLog`` of a knowledge-base folder in this process."""
    path = (Path(kb_path) / ACCESS_FILE).resolve()
    with _logs_lock:
        log = _logs.get(path)
        if log is None:
            log = _logs[path] = AccessLog(path)
        return log
