"""When each chunk was last returned by ``memory_search``: "retrieval strengthens memory".

Kept in ``memory_access.sqlite`` in the knowledge-base folder, apart from the built
stores: it is state about use, not derived from documents, so a rebuild or ``heta
delete`` keeps it, and readers may write it without the knowledge base's writer lock.
Several processes (a server and CLI queries) may write at once: every update is one
SQLite transaction (WAL, busy timeout) that only ever moves a time forward.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from heta_framework.common.sqlite import open_database

ACCESS_FILE = "memory_access.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS last_access (
    chunk_id TEXT PRIMARY KEY,
    accessed REAL NOT NULL,
    count INTEGER NOT NULL DEFAULT 1
);
"""
_BATCH = 500


class AccessLog:
    """Last-access times by chunk id; safe to share between threads."""

    def __init__(self, path: Path):
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self._db = open_database(self.path, _SCHEMA)
            self._db.execute("PRAGMA busy_timeout=5000")
        return self._db

    def last_access(self, chunk_ids: Sequence[str]) -> dict[str, float]:
        if not self.path.exists():
            return {}  # never written: nothing was accessed, and a read must not create files
        ids = list(dict.fromkeys(chunk_ids))
        found: dict[str, float] = {}
        with self._lock:
            db = self._connection()
            for start in range(0, len(ids), _BATCH):
                part = ids[start : start + _BATCH]
                marks = ",".join("?" * len(part))
                found.update(db.execute(f"SELECT chunk_id, accessed FROM last_access WHERE chunk_id IN ({marks})", part).fetchall())
        return found

    def record(self, chunk_ids: Iterable[str], when: float) -> None:
        """Mark ``chunk_ids`` accessed at ``when``, in one transaction (an older time never overwrites a newer one)."""
        rows = [(chunk_id, when) for chunk_id in dict.fromkeys(chunk_ids)]
        if not rows:
            return
        with self._lock:
            db = self._connection()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO last_access (chunk_id, accessed) VALUES (?, ?) ON CONFLICT(chunk_id) DO UPDATE SET "
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
