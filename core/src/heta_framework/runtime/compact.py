"""``kb.compact()``: make deleted text physically gone from the knowledge-base folder.

Deleting a document removes it from every store at once, but the bytes can stay
on disk: SQLite only marks freed pages (and an FTS5 index keeps deleted terms in
its segments until they merge), Whoosh keeps deleted documents in its segment
files until segments merge. Compaction rewrites them:

1. every open store that has a ``compact()`` method runs it (the Whoosh text
   index merges its segments into one, dropping deleted documents);
2. every SQLite file in the folder merges its FTS5 indexes (``'optimize'``), is
   rewritten from its live rows (``VACUUM``) and has its write-ahead log truncated.

It runs as a writer (the knowledge-base lock), so no build changes files under it.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs

log = logging.getLogger(__name__)

SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


@attrs.frozen
class CompactReport:
    """What ``compact()`` rewrote, and the folder's size in bytes before and after."""

    stores: tuple[str, ...]
    sqlite_files: tuple[str, ...]
    bytes_before: int
    bytes_after: int
    busy_files: tuple[str, ...] = ()  # a reader held an old snapshot: run compact() again later


def folder_size(root: Path) -> int:
    return sum(path.stat().st_size for path in root.rglob("*") if path.is_file())


def _fts5_tables(db: sqlite3.Connection) -> list[str]:
    rows = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql IS NOT NULL").fetchall()
    return [name for name, sql in rows if "using fts5" in sql.lower()]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def compact_sqlite_file(path: Path) -> bool:
    """Merge FTS5 segments, VACUUM and truncate the WAL; ``False`` if a reader kept the WAL from being emptied."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        for table in _fts5_tables(db):
            # table names come from sqlite_master, not from users; quoted all the same
            db.execute(f"INSERT INTO {_quoted(table)}({_quoted(table)}) VALUES ('optimize')")
        db.execute("VACUUM")
        busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        return not busy
    finally:
        db.close()


def sqlite_files(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*") if path.is_file() and path.suffix in SQLITE_SUFFIXES)


class CompactHost(Protocol):
    """What compaction needs of a knowledge base (the ``KnowledgeBase`` is one)."""

    path: Path
    steps: Sequence[Any]

    def get_component(self, key: str) -> Any: ...

    def close(self) -> None: ...


def compact_knowledge_base(kb: CompactHost) -> CompactReport:
    """Compact ``kb``'s stores and SQLite files; the caller holds the writer lock."""
    root = Path(kb.path)
    before = folder_size(root)
    compacted = []
    # only the stores the recipe's steps use: opening a default store of another slot would create it
    used = {ref.key for step in kb.steps for ref in step.requirements.components if ref.key.startswith("stores.")}
    for key in sorted(used):
        store = kb.get_component(key)
        if hasattr(store, "compact"):
            store.compact()
            compacted.append(key)
    kb.close()  # every connection closed, so VACUUM has the files to itself; stores reopen on next use
    files, busy = [], []
    for path in sqlite_files(root):
        relative = str(path.relative_to(root))
        try:
            if not compact_sqlite_file(path):
                busy.append(relative)
        except sqlite3.DatabaseError as exc:  # not a database after all, or locked by a reader's transaction
            log.warning("could not compact %s: %s", relative, exc)
            busy.append(relative)
            continue
        files.append(relative)
    return CompactReport(
        stores=tuple(compacted),
        sqlite_files=tuple(files),
        bytes_before=before,
        bytes_after=folder_size(root),
        busy_files=tuple(busy),
    )
