"""``stores.sql``: chunk text in SQLite, with an FTS5 index for ``sql_text_search``.

Every statement is parameterised, filter keys included (they become JSON paths
passed as parameters). The text is analysed in Python before FTS5 sees it
(stop words, Snowball stems, one token per Chinese/Japanese/Korean character;
see ``sqlite_fts.py``); the analyzer is recorded in the file, so an index is
always queried the way it was built.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.builtin.stores.sqlite_fts import (
    AUTO,
    STANDARD,
    check_sql_analyzer,
    fts_body,
    fts_match_expression,
    query_terms,
)
from heta_framework.common.sqlite import ReaderConnections, json_key_in, open_database, read_snapshot, transaction
from heta_framework.contracts.documents import Chunk
from heta_framework.text.languages import chunk_languages, query_languages

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    document_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    text TEXT NOT NULL,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    source TEXT NOT NULL,
    page INTEGER,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_document ON chunks(document_id);
-- the FTS row shares the chunk's rowid, so updates and deletes are index lookups, not scans
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
-- how chunks_fts was analysed (analyzer, and for "auto" the chunks per language); a file without it is "standard"
CREATE TABLE IF NOT EXISTS fts_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

@attrs.frozen
class SQLiteChunkStoreConfig:
    """``[stores.sql]`` options. ``analyzer``: ``standard`` (words as written), a language
    (``english``, ``french``, ``spanish``, ``german``, ``italian``, ``portuguese``, ``dutch``,
    ``russian``: stop words and stems) or ``auto`` (each chunk in its detected language).
    Unset, a new file follows its documents (``auto``) and an existing one keeps what it was built with."""

    path: str = "chunks.sqlite"
    analyzer: str | None = attrs.field(default=None, validator=lambda _i, _a, value: value is None or check_sql_analyzer(value))


class SQLiteChunkStore:
    """The default ``SQLStore``: every write call is one SQLite transaction.

    Writes go through one connection behind a lock. Reads use a connection of
    their own per thread (WAL lets them run beside each other and beside the
    writer, and sqlite3 releases the GIL while a statement runs), so concurrent
    queries are not serialised on one connection.
    """

    def __init__(self, path: Path, kb_root: Path | None = None, analyzer: str | None = None):
        self.path = path
        self._kb_root = kb_root
        self._lock = threading.Lock()
        self._db = open_database(path, _SCHEMA)
        self._readers = ReaderConnections(path)
        self.analyzer = self._settle_analyzer(None if analyzer is None else check_sql_analyzer(analyzer))

    @classmethod
    def open(cls, config: SQLiteChunkStoreConfig | None, kb_root: Path) -> SQLiteChunkStore:
        config = config or SQLiteChunkStoreConfig()
        return cls(kb_root / config.path, kb_root, config.analyzer)

    def _setting(self, key: str) -> str | None:
        row = self._readers.get().execute("SELECT value FROM fts_settings WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _settle_analyzer(self, configured: str | None) -> str:
        """The analyzer this file was built with (recorded by the first write), else the configured one
        (``auto`` when the config names none)."""
        recorded = self._setting("analyzer")
        if recorded is None:
            has_rows = self._readers.get().execute("SELECT 1 FROM chunks LIMIT 1").fetchone() is not None
            # a file written before analyzers existed holds "standard" rows, whatever the config says now
            recorded = STANDARD if has_rows else configured or AUTO
        if configured is not None and recorded != configured:
            log.warning(
                "SQL chunk index %s was built with analyzer %r; [stores.sql] now says %r. Using %r; "
                "delete the knowledge base's derived data (`heta delete`) and build again to change it.",
                self.path, recorded, configured, recorded,
            )
        return recorded

    def _language_counts(self, db: Any = None) -> dict[str, int]:
        """Chunks per language under ``auto`` (read again: another process may have written since); a file
        written before counts has each recorded language once. ``db``: the writer's connection, in its transaction."""
        rows = dict((db or self._readers.get()).execute(
            "SELECT key, value FROM fts_settings WHERE key IN ('language_counts', 'languages')").fetchall())
        if "language_counts" in rows:
            return {str(k): int(v) for k, v in json.loads(rows["language_counts"]).items()}
        return dict.fromkeys(json.loads(rows.get("languages") or "[]"), 1)

    def _query_languages(self, query: str) -> list[str | None]:
        if self.analyzer == AUTO:
            # the index's main languages and the query's own when it is clear (heta_framework.text.languages)
            return [None if name == STANDARD else name for name in query_languages(self._language_counts(), query)]
        return [None if self.analyzer == STANDARD else self.analyzer]

    def query_terms(self, query: str) -> list[str]:
        """The FTS5 terms ``query`` becomes; empty when the analyzer finds nothing to search for."""
        return query_terms(query, self._query_languages(query))

    def relative_paths(self) -> list[str]:
        """The files this store owns, relative to the knowledge-base folder (for cleanup plans)."""
        base = self.path.relative_to(self._kb_root).as_posix() if self._kb_root else str(self.path)
        return [base, f"{base}-wal", f"{base}-shm"]

    def flush(self) -> None:
        """Nothing to do: every write call has committed before it returned."""

    def close(self) -> None:
        self._readers.close()
        self._db.close()

    def upsert_chunks(self, chunks: Iterable[Chunk]) -> int:
        written = 0
        seen: Counter[str] = Counter()
        chunks = list(chunks)
        with self._lock, transaction(self._db):
            self._db.execute("INSERT OR IGNORE INTO fts_settings (key, value) VALUES ('analyzer', ?)", (self.analyzer,))
            # one lookup for the whole batch: a first build replaces nothing, and a query per chunk was a tenth
            # of the step; ids stored already, or twice in this batch, take the replacing path
            stored = self._stored_ids([c.id for c in chunks])
            languages = (chunk_languages([c.text for c in chunks], self._language_counts(self._db)) if self.analyzer == AUTO
                         else [self.analyzer] * len(chunks))
            for c, language in zip(chunks, languages):
                old = self._db.execute("SELECT rowid FROM chunks WHERE id = ?", (c.id,)).fetchone() if c.id in stored else None
                stored.add(c.id)
                if old is not None:
                    self._db.execute("DELETE FROM chunks_fts WHERE rowid = ?", old)
                    self._db.execute("DELETE FROM chunks WHERE rowid = ?", old)
                rowid = self._db.execute(
                    "INSERT INTO chunks (id, document_id, chunk_index, text, start, end, source, page, metadata)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (c.id, c.document_id, c.index, c.text, c.start, c.end, c.source, c.page, json.dumps(dict(c.metadata), ensure_ascii=False)),
                ).lastrowid
                seen[language] += 1
                analysed = None if language == STANDARD else language
                self._db.execute("INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)", (rowid, fts_body(c.text, analysed)))
                written += 1
            if self.analyzer == AUTO and seen:
                # chunks written per language, in the same transaction as the rows (a replaced chunk counts again)
                counts = Counter(self._language_counts(self._db)) + seen
                self._db.execute("INSERT OR REPLACE INTO fts_settings (key, value) VALUES ('language_counts', ?)",
                                 (json.dumps(dict(sorted(counts.items()))),))
                self._db.execute("INSERT OR REPLACE INTO fts_settings (key, value) VALUES ('languages', ?)",
                                 (json.dumps(sorted(counts)),))
        return written

    def _stored_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` the table holds (on the writer's connection, inside its transaction)."""
        stored: set[str] = set()
        for start in range(0, len(ids), 500):
            batch = list(ids[start : start + 500])
            marks = ",".join("?" * len(batch))
            stored.update(row[0] for row in self._db.execute(f"SELECT id FROM chunks WHERE id IN ({marks})", batch))
        return stored

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        deleted = 0
        with self._lock, transaction(self._db):
            for document_id in document_ids:
                self._db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)", (document_id,))
                deleted += self._db.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,)).rowcount
        return deleted

    def count(self) -> int:
        return self._readers.get().execute("SELECT COUNT(*) FROM chunks").fetchone()[0]

    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        found: dict[str, Chunk] = {}
        # one read transaction: every batch sees the same committed state
        with read_snapshot(self._readers.get()) as db:
            for start in range(0, len(ids), 500):
                batch = list(ids[start : start + 500])
                marks = ",".join("?" * len(batch))
                for row in db.execute(f"SELECT {_COLUMNS} FROM chunks WHERE id IN ({marks})", batch):
                    chunk = _row_to_chunk(row)
                    found[chunk.id] = chunk
        return found

    def search_text(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]:
        expression = fts_match_expression(query, self._query_languages(query))
        if expression is None:
            return []
        where, params = filter_clause(filters or {})
        sql = (
            f"SELECT {_COLUMNS}, bm25(chunks_fts) AS rank FROM chunks_fts"
            " JOIN chunks ON chunks.rowid = chunks_fts.rowid"
            f" WHERE chunks_fts MATCH ? {where} ORDER BY rank LIMIT ?"
        )
        rows = self._readers.get().execute(sql, [expression, *params, top_k]).fetchall()
        # bm25() is lower-is-better and negative; report a positive, higher-is-better score
        return [(_row_to_chunk(row[:-1]), -float(row[-1])) for row in rows]


_COLUMNS = "chunks.id, chunks.document_id, chunks.chunk_index, chunks.text, chunks.start, chunks.end, chunks.source, chunks.page, chunks.metadata"


def _row_to_chunk(row: Sequence[Any]) -> Chunk:
    return Chunk(
        id=row[0], document_id=row[1], index=row[2], text=row[3], start=row[4], end=row[5],
        source=row[6], page=row[7], metadata=json.loads(row[8]),
    )


def filter_clause(filters: Mapping[str, Any]) -> tuple[str, list[Any]]:
    """``AND ...`` conditions for metadata filters, fully parameterised.

    ``document_id`` and ``source`` are columns; any other key is looked up in
    the chunk's metadata. A list value means "any of these".
    """
    clauses: list[str] = []
    params: list[Any] = []
    for key, value in filters.items():
        values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
        if not values:
            clauses.append("0")
            continue
        if key in ("document_id", "source"):
            clauses.append(f"chunks.{key} IN ({','.join('?' * len(values))})")
            params.extend(values)
        else:
            clause, clause_params = json_key_in("chunks.metadata", str(key), values)
            clauses.append(clause)
            params.extend(clause_params)
    return "".join(f" AND {c}" for c in clauses), params
