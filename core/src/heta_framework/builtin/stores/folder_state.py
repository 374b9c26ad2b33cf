"""``FolderState``: a knowledge base's own state in its folder (the default ``[stores.state]``).

- ``catalog.json``, ``removed.json``, ``run_record.json``: JSON files rewritten by
  write-then-rename, so a reader sees the old file or the new one.
- ``version()``: each file's (inode, modification time, size); a rename by another
  process changes it.
- the writer lock: ``flock`` on ``writer.lock`` (``kb/lock.py``).
- caches: one SQLite key-value table per name, ``<name>/cache.sqlite``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.common.atomic import read_json, write_json_atomic
from heta_framework.common.sqlite import open_database, transaction
from heta_framework.common.writer_lock import WriterLock, another_writer_holds
from heta_framework.contracts.documents import DocumentRecord

RECORD_FILE = "run_record.json"
CATALOG_FILE = "catalog.json"
REMOVED_FILE = "removed.json"
CACHE_FILE = "cache.sqlite"
#: SQLite's limit on host parameters is 32766; stay well below it
_BATCH = 30000


class SQLiteCache:
    """``CacheProtocol`` in one SQLite file: ``entries(key, value)``, one transaction per ``put_many``."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._db = open_database(path, "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;")

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        unique = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        with self._lock:
            for start in range(0, len(unique), _BATCH):
                part = unique[start : start + _BATCH]
                marks = ",".join("?" * len(part))
                found.update(self._db.execute(f"SELECT key, value FROM entries WHERE key IN ({marks})", part))
        return found

    def put_many(self, items: Mapping[str, bytes]) -> None:
        with self._lock, transaction(self._db):
            self._db.executemany("INSERT OR REPLACE INTO entries (key, value) VALUES (?, ?)", list(items.items()))

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


class FolderState:
    """``KnowledgeBaseState`` in the knowledge-base folder; what every folder knowledge base always did."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._caches: dict[str, SQLiteCache] = {}
        self._caches_lock = threading.Lock()

    @classmethod
    def open(cls, config: Any, root: Path) -> FolderState:
        """The store factory (``[stores.state] type = "folder"``, the default); the folder has no options."""
        return cls(root)

    def __repr__(self) -> str:
        return f"FolderState({str(self.root)!r})"

    @property
    def location(self) -> str:
        """Where the state lives, for messages."""
        return str(self.root)

    # --- catalog, removed documents, run record ---------------------------------------

    def read_catalog(self) -> dict[str, DocumentRecord]:
        data = read_json(self.root / CATALOG_FILE, {}) or {}
        return {key: DocumentRecord.from_dict(value) for key, value in data.items()}

    def write_catalog(self, records: Mapping[str, DocumentRecord]) -> None:
        write_json_atomic(self.root / CATALOG_FILE, {k: attrs.asdict(v) for k, v in records.items()})

    def read_removed(self) -> dict[str, dict[str, Any]]:
        return read_json(self.root / REMOVED_FILE, {}) or {}

    def write_removed(self, removed: Mapping[str, Mapping[str, Any]]) -> None:
        write_json_atomic(self.root / REMOVED_FILE, {k: dict(v) for k, v in removed.items()})

    def read_run_record(self) -> dict[str, Any] | None:
        return read_json(self.root / RECORD_FILE)

    def write_run_record(self, data: Mapping[str, Any]) -> None:
        write_json_atomic(self.root / RECORD_FILE, data)

    def clear_run_record(self) -> None:
        (self.root / RECORD_FILE).unlink(missing_ok=True)

    def version(self) -> tuple[Any, ...]:
        stamp: list[Any] = []
        for name in (RECORD_FILE, CATALOG_FILE, REMOVED_FILE):
            try:
                info = os.stat(self.root / name)
            except FileNotFoundError:
                stamp.append(None)
            else:
                stamp.append((info.st_ino, info.st_mtime_ns, info.st_size))
        return tuple(stamp)

    # --- writer lock -----------------------------------------------------------------

    def writer_lock(self, operation: str) -> WriterLock:
        return WriterLock(self.root, operation)

    def writer_active(self) -> bool:
        return another_writer_holds(self.root)

    # --- caches ----------------------------------------------------------------------

    def cache(self, name: str) -> SQLiteCache:
        if not name.isidentifier():
            raise ValueError(f"A cache name is a plain identifier (letters, digits, _), got {name!r}.")
        with self._caches_lock:
            cache = self._caches.get(name)
            # KnowledgeBase.delete removes the file with the steps' cleanup plans: start a new one then
            if cache is None or not cache.path.exists():
                if cache is not None:
                    cache.close()
                cache = self._caches[name] = SQLiteCache(self.root / name / CACHE_FILE)
            return cache

    def close(self) -> None:
        with self._caches_lock:
            caches, self._caches = list(self._caches.values()), {}
        for cache in caches:
            cache.close()
