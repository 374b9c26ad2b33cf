"""``stores.sql``: chunk text in SQLite, with an FTS5 index for ``sql_text_search``.

Every statement is parameterised, filter keys included (they become JSON paths
passed as parameters). Chinese/Japanese/Korean characters are indexed one per
token and queried as phrases, so ``上海市`` matches text containing it.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.common.sqlite import json_key_in, open_database, transaction
from heta_framework.kb.documents import Chunk

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
"""

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHAR = re.compile(f"([{_CJK}])")
_QUERY_TOKEN = re.compile(f"[{_CJK}]+|[^\\W_]+", re.UNICODE)


def fts_body(text: str) -> str:
    """Text as indexed: CJK characters spaced out so each is one FTS token."""
    return _CJK_CHAR.sub(r" \1 ", text)


def fts_match_expression(query: str) -> str | None:
    """An FTS5 expression that ORs the query's words; CJK runs become phrases. None if no words."""
    terms = []
    for token in _QUERY_TOKEN.findall(query):
        if _CJK_CHAR.match(token):
            terms.append('"' + " ".join(token) + '"')
        else:
            terms.append('"' + token.replace('"', '""') + '"')
    if not terms:
        return None
    return " OR ".join(dict.fromkeys(terms))


@attrs.frozen
class SQLiteChunkStoreConfig:
    path: str = "chunks.sqlite"


class SQLiteChunkStore:
    """The default ``SQLStore``: every write call is one SQLite transaction."""

    def __init__(self, path: Path, kb_root: Path | None = None):
        self.path = path
        self._kb_root = kb_root
        self._lock = threading.Lock()
        self._db = open_database(path, _SCHEMA)

    @classmethod
    def open(cls, config: SQLiteChunkStoreConfig | None, kb_root: Path) -> SQLiteChunkStore:
        return cls(kb_root / (config or SQLiteChunkStoreConfig()).path, kb_root)

    def relative_paths(self) -> list[str]:
        """The files this store owns, relative to the knowledge-base folder (for cleanup plans)."""
        base = self.path.relative_to(self._kb_root).as_posix() if self._kb_root else str(self.path)
        return [base, f"{base}-wal", f"{base}-shm"]

    def flush(self) -> None:
        """Nothing to do: every write call has committed before it returned."""

    def close(self) -> None:
        self._db.close()

    def upsert_chunks(self, chunks: Iterable[Chunk]) -> int:
        written = 0
        with self._lock, transaction(self._db):
            for c in chunks:
                old = self._db.execute("SELECT rowid FROM chunks WHERE id = ?", (c.id,)).fetchone()
                if old is not None:
                    self._db.execute("DELETE FROM chunks_fts WHERE rowid = ?", old)
                    self._db.execute("DELETE FROM chunks WHERE rowid = ?", old)
                rowid = self._db.execute(
                    "INSERT INTO chunks (id, document_id, chunk_index, text, start, end, source, page, metadata)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (c.id, c.document_id, c.index, c.text, c.start, c.end, c.source, c.page, json.dumps(dict(c.metadata), ensure_ascii=False)),
                ).lastrowid
                self._db.execute("INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)", (rowid, fts_body(c.text)))
                written += 1
        return written

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        deleted = 0
        with self._lock, transaction(self._db):
            for document_id in document_ids:
                self._db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)", (document_id,))
                deleted += self._db.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,)).rowcount
        return deleted

    def count(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]

    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        found: dict[str, Chunk] = {}
        with self._lock:
            for start in range(0, len(ids), 500):
                batch = list(ids[start : start + 500])
                marks = ",".join("?" * len(batch))
                for row in self._db.execute(f"SELECT {_COLUMNS} FROM chunks WHERE id IN ({marks})", batch):
                    chunk = _row_to_chunk(row)
                    found[chunk.id] = chunk
        return found

    def search_text(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]:
        expression = fts_match_expression(query)
        if expression is None:
            return []
        where, params = filter_clause(filters or {})
        sql = (
            f"SELECT {_COLUMNS}, bm25(chunks_fts) AS rank FROM chunks_fts"
            " JOIN chunks ON chunks.rowid = chunks_fts.rowid"
            f" WHERE chunks_fts MATCH ? {where} ORDER BY rank LIMIT ?"
        )
        with self._lock:
            rows = self._db.execute(sql, [expression, *params, top_k]).fetchall()
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
