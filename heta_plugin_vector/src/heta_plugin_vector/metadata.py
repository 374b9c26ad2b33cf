"""The metadata beside a collection's vectors: one SQLite table, keyed by the FAISS integer key.

FAISS only knows int64 keys; this table maps them to the caller's string ids and
keeps each record's metadata as JSON (never pickle). ``document_id`` and
``source`` get their own indexed columns because they are by far the most common
filters (and ``delete_documents`` uses ``document_id``); any other metadata key
is matched with ``json_extract`` (a table scan, still in C).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from heta_framework.common.sqlite import json_key_in, open_database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    document_id TEXT,
    source TEXT,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_document ON records(document_id);
CREATE INDEX IF NOT EXISTS records_source ON records(source);
"""

#: filter keys that are real, indexed columns
_COLUMNS = {"id": "id", "document_id": "document_id", "source": "source"}
#: SQLite's default limit on host parameters is 32766; stay well below it
_CHUNK = 30000


def _as_values(value: Any) -> list[Any]:
    """A filter value as a list of accepted values (a list/tuple/set means "any of")."""
    values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
    # json_extract returns JSON true/false as 1/0
    return [int(v) if isinstance(v, bool) else v for v in values]


def _chunks(items: Sequence[Any], size: int = _CHUNK) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class MetadataTable:
    """Records ``(key, id, metadata)`` in ``metadata.sqlite``. Not thread-safe: the collection holds the lock."""

    def __init__(self, path: Path):
        self.path = path
        self._db = open_database(path, _SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM records").fetchone()[0]

    def max_key(self) -> int:
        value = self._db.execute("SELECT MAX(key) FROM records").fetchone()[0]
        return -1 if value is None else int(value)

    def all_keys(self) -> np.ndarray:
        rows = self._db.execute("SELECT key FROM records").fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def keys_for_ids(self, ids: Sequence[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        for part in _chunks(list(ids)):
            marks = ",".join("?" * len(part))
            found.update(self._db.execute(f"SELECT id, key FROM records WHERE id IN ({marks})", list(part)).fetchall())
        return found

    def replace(self, keys: Sequence[int], ids: Sequence[str], metadata: Sequence[Mapping[str, Any]], *, existing: bool = True) -> None:
        """Insert records in one transaction, first deleting the records of these ids when ``existing``.

        The caller knows (it looked the ids up): a first build writes only new ids, and a
        DELETE per id there was a third of the table's write time for nothing.
        """
        rows = [
            (int(key), record_id, meta.get("document_id"), meta.get("source"), json.dumps(dict(meta), ensure_ascii=False))
            for key, record_id, meta in zip(keys, ids, metadata)
        ]
        with self._transaction():
            if existing:
                self._db.executemany("DELETE FROM records WHERE id = ?", [(r[1],) for r in rows])
            self._db.executemany(
                "INSERT INTO records (key, id, document_id, source, metadata) VALUES (?, ?, ?, ?, ?)", rows
            )

    def delete_keys(self, keys: Sequence[int]) -> None:
        with self._transaction():
            self._db.executemany("DELETE FROM records WHERE key = ?", [(int(k),) for k in keys])

    def matching(self, filters: Mapping[str, Any]) -> list[tuple[int, str]]:
        """``(key, id)`` of every record whose metadata matches all ``filters``."""
        clauses: list[str] = []
        params: list[Any] = []
        for field, value in filters.items():
            values = _as_values(value)
            if not values:
                return []
            if field in _COLUMNS:
                clauses.append(f"{_COLUMNS[field]} IN ({','.join('?' * len(values))})")
                params.extend(values)
            else:
                clause, clause_params = json_key_in("metadata", str(field), values)
                clauses.append(clause)
                params.extend(clause_params)
        where = " AND ".join(clauses) or "1"
        return self._db.execute(f"SELECT key, id FROM records WHERE {where}", params).fetchall()

    def by_keys(self, keys: Iterable[int]) -> dict[int, tuple[str, str]]:
        """key -> (id, metadata JSON) for the given keys."""
        keys = [int(k) for k in keys]
        found: dict[int, tuple[str, str]] = {}
        for start in range(0, len(keys), _CHUNK):
            part = keys[start : start + _CHUNK]
            sql = f"SELECT key, id, metadata FROM records WHERE key IN ({','.join('?' * len(part))})"
            for key, record_id, meta in self._db.execute(sql, part):
                found[key] = (record_id, meta)
        return found

    def metadata_for_ids(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        found: dict[str, dict[str, Any]] = {}
        for part in _chunks(list(ids)):
            marks = ",".join("?" * len(part))
            for record_id, meta in self._db.execute(f"SELECT id, metadata FROM records WHERE id IN ({marks})", list(part)):
                found[record_id] = json.loads(meta)
        return found

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN")

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self._db.execute("ROLLBACK" if exc_type else "COMMIT")
