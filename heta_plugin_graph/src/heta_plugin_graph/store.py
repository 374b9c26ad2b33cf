"""``stores.graph`` (type ``sqlite_graph``): entities, relations, evidence and evidence chunk text in SQLite.

Every fact (entity or relation) has one ``evidence`` row per chunk that
supports it, naming the chunk and its document. The text of every evidence
chunk is kept in ``chunks`` so search can show evidence without another store.
A fact lives exactly as long as at least one evidence row does: deleting a
document deletes its evidence and then every fact left without any, in one
transaction that also covers the caller's vector deletes.

Every statement is parameterised; names are joined on ``name_key``, the
output of ``normalize_name``.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
from heta_framework.common.sqlite import open_database
from heta_framework.kb.graph_store import (  # the value types are core's, so other backends return the same ones
    ChunkLink,
    GraphFacts,
    OrphanHandler,
    RemovedFacts,
    StoredChunk,
    StoredEntity,
    StoredRelation,
)

from heta_plugin_graph.normalize import normalize_name

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    type TEXT NOT NULL,
    description TEXT NOT NULL,
    attributes TEXT NOT NULL,
    aliases TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS entities_name_key ON entities(name_key);
CREATE TABLE IF NOT EXISTS relations (
    id TEXT PRIMARY KEY,
    source_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    type TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS relations_source ON relations(source_id);
CREATE INDEX IF NOT EXISTS relations_target ON relations(target_id);
CREATE TABLE IF NOT EXISTS evidence (
    fact_kind TEXT NOT NULL CHECK (fact_kind IN ('entity', 'relation')),
    fact_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    description TEXT NOT NULL,
    PRIMARY KEY (fact_kind, fact_id, chunk_id)
);
CREATE INDEX IF NOT EXISTS evidence_document ON evidence(document_id);
CREATE INDEX IF NOT EXISTS evidence_chunk ON evidence(chunk_id);
CREATE TABLE IF NOT EXISTS chunks (
    id TEXT PRIMARY KEY,
    document_id TEXT NOT NULL,
    text TEXT NOT NULL,
    metadata TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_document ON chunks(document_id);
"""

_BATCH = 500
#: ``GraphStore.chunk_links`` in one statement: the link rows of the neighbourhood (rank 0: a seed's own evidence,
#: keyed by the seed; 1: a touching relation's, by the relation; 2: a neighbour's, by the neighbour), counted per
#: chunk; then the first link of each chunk kept. CROSS JOIN keeps SQLite's order (the few facts first, then their
#: evidence by primary key) and ``+fact_kind`` keeps it off the kind index: without them it walked every
#: relation's evidence and took twice as long
_CHUNK_LINKS = """
WITH
 seeds(id) AS (
   SELECT DISTINCT fact_id FROM evidence
   WHERE chunk_id IN (SELECT value FROM json_each(:chunks)) AND +fact_kind = 'entity'
     AND document_id IN (SELECT value FROM json_each(:documents))),
 touching(id, seed, other) AS (
   SELECT id, source_id, target_id FROM relations WHERE source_id IN seeds
   UNION ALL
   SELECT id, target_id, source_id FROM relations WHERE target_id IN seeds AND source_id NOT IN seeds),
 neighbours(id, seed, relation) AS (  -- SQLite takes the bare columns from the row MIN() chose
   SELECT other, seed, MIN(id) FROM touching WHERE other NOT IN seeds GROUP BY other),
 links(chunk_id, rank, key, entity, relation) AS (
   SELECT chunk_id, 0, fact_id, fact_id, '' FROM evidence WHERE fact_kind = 'entity' AND fact_id IN seeds
   UNION ALL
   SELECT e.chunk_id, 1, t.id, t.seed, t.id FROM touching t
     CROSS JOIN evidence e ON e.fact_kind = 'relation' AND e.fact_id = t.id
   UNION ALL
   SELECT e.chunk_id, 2, n.id, n.seed, n.relation FROM neighbours n
     CROSS JOIN evidence e ON e.fact_kind = 'entity' AND e.fact_id = n.id),
 top AS (
   SELECT chunk_id, COUNT(*) AS n FROM links WHERE chunk_id NOT IN (SELECT value FROM json_each(:chunks))
   GROUP BY chunk_id ORDER BY n DESC, chunk_id LIMIT :limit),
 firsts AS (
   SELECT chunk_id, entity, relation, ROW_NUMBER() OVER (PARTITION BY chunk_id ORDER BY rank, key) AS place
   FROM links WHERE chunk_id IN (SELECT chunk_id FROM top))
SELECT top.chunk_id, top.n, firsts.entity, firsts.relation FROM top JOIN firsts ON firsts.chunk_id = top.chunk_id AND firsts.place = 1
ORDER BY top.n DESC, top.chunk_id
"""


@attrs.frozen
class SQLiteGraphStoreConfig:
    path: str = "graph.sqlite"


def _entity(row: Sequence[Any]) -> StoredEntity:
    """A row ``(id, name, type, description, attributes JSON, aliases JSON, ...)`` as a StoredEntity."""
    # most entities have neither: skipping the parse of "{}" and "[]" is a third of a search's entity reads
    attributes = {} if row[4] == "{}" else json.loads(row[4])
    aliases = () if row[5] == "[]" else tuple(json.loads(row[5]))
    return StoredEntity(row[0], row[1], row[2], row[3], attributes, aliases)


def _batches(items: Sequence[Any]) -> Iterable[list[Any]]:
    for start in range(0, len(items), _BATCH):
        yield list(items[start : start + _BATCH])


class SQLiteGraphStore:
    """The default ``GraphStore`` (``heta_framework.kb.stores``)."""

    def __init__(self, path: Path, kb_root: Path | None = None):
        self.path = path
        self._kb_root = kb_root
        self._lock = threading.RLock()
        self._db = open_database(path, _SCHEMA)

    @classmethod
    def open(cls, config: SQLiteGraphStoreConfig | None, kb_root: Path) -> SQLiteGraphStore:
        return cls(kb_root / (config or SQLiteGraphStoreConfig()).path, kb_root)

    def relative_paths(self) -> list[str]:
        base = self.path.relative_to(self._kb_root).as_posix() if self._kb_root else str(self.path)
        return [base, f"{base}-wal", f"{base}-shm"]

    def flush(self) -> None:
        """Nothing to do: every write call has committed before it returned."""

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self):
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    # --- writing ---------------------------------------------------------------------

    def write_draft(
        self,
        draft: GraphFacts,
        chunks: Iterable[StoredChunk],
        *,
        replace_documents: Sequence[str] = (),
        on_orphans: OrphanHandler | None = None,
    ) -> RemovedFacts:
        """Upsert a draft with its evidence and evidence chunks, in one transaction.

        ``replace_documents``: evidence these documents gave earlier is dropped
        first (a rebuilt or changed document says what it says now); facts left
        without evidence are removed and reported to ``on_orphans``.
        """
        with self._transaction() as db:
            self._delete_evidence_of(db, replace_documents)
            db.executemany(
                "INSERT OR REPLACE INTO chunks (id, document_id, text, metadata) VALUES (?, ?, ?, ?)",
                ((c.id, c.document_id, c.text, json.dumps(dict(c.metadata), ensure_ascii=False)) for c in chunks),
            )
            # an existing entity keeps its name and description; a new one is inserted
            db.executemany(
                "INSERT INTO entities (id, name, name_key, type, description, attributes, aliases) VALUES (?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET"
                " description = CASE WHEN entities.description = '' THEN excluded.description ELSE entities.description END,"
                " aliases = CASE WHEN entities.aliases = '[]' THEN excluded.aliases ELSE entities.aliases END",
                (
                    (e.id, e.name, normalize_name(e.name), e.type, e.description, json.dumps(dict(e.attributes), ensure_ascii=False),
                     json.dumps(list(e.aliases), ensure_ascii=False))
                    for e in draft.entities
                ),
            )
            db.executemany(
                "INSERT INTO relations (id, source_id, target_id, type, name, description) VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET"
                " description = CASE WHEN relations.description = '' THEN excluded.description ELSE relations.description END",
                ((r.id, r.source_id, r.target_id, r.type, r.name, r.description) for r in draft.relations),
            )
            # generated as SQLite takes them: a list would hold every evidence row of the graph at once
            rows = itertools.chain(
                (("entity", e.id, ev.chunk_id, ev.document_id, ev.description) for e in draft.entities for ev in e.evidence),
                (("relation", r.id, ev.chunk_id, ev.document_id, ev.description) for r in draft.relations for ev in r.evidence),
            )
            db.executemany(
                "INSERT OR REPLACE INTO evidence (fact_kind, fact_id, chunk_id, document_id, description) VALUES (?, ?, ?, ?, ?)", rows
            )
            return self._remove_orphans(db, on_orphans, evidence_rows=0)

    def delete_documents(self, document_ids: Sequence[str], on_orphans: OrphanHandler | None = None) -> RemovedFacts:
        """Remove the documents' evidence and chunks, and every fact no other chunk supports."""
        with self._transaction() as db:
            removed_rows = self._delete_evidence_of(db, document_ids)
            for batch in _batches(list(document_ids)):
                marks = ",".join("?" * len(batch))
                db.execute(f"DELETE FROM chunks WHERE document_id IN ({marks})", batch)
            return self._remove_orphans(db, on_orphans, evidence_rows=removed_rows)

    def _delete_evidence_of(self, db: sqlite3.Connection, document_ids: Sequence[str]) -> int:
        removed = 0
        for batch in _batches(list(document_ids)):
            marks = ",".join("?" * len(batch))
            removed += db.execute(f"DELETE FROM evidence WHERE document_id IN ({marks})", batch).rowcount
        return removed

    def _remove_orphans(self, db: sqlite3.Connection, on_orphans: OrphanHandler | None, evidence_rows: int) -> RemovedFacts:
        entity_ids = [row[0] for row in db.execute(
            "SELECT id FROM entities WHERE NOT EXISTS"
            " (SELECT 1 FROM evidence WHERE fact_kind = 'entity' AND fact_id = entities.id)"
        )]
        # a relation goes with its last evidence, or with either endpoint
        relation_ids = [row[0] for row in db.execute(
            "SELECT id FROM relations WHERE NOT EXISTS"
            " (SELECT 1 FROM evidence WHERE fact_kind = 'relation' AND fact_id = relations.id)"
            " OR NOT EXISTS (SELECT 1 FROM evidence WHERE fact_kind = 'entity' AND fact_id = relations.source_id)"
            " OR NOT EXISTS (SELECT 1 FROM evidence WHERE fact_kind = 'entity' AND fact_id = relations.target_id)"
        )]
        for batch in _batches(entity_ids):
            db.execute(f"DELETE FROM entities WHERE id IN ({','.join('?' * len(batch))})", batch)
        for batch in _batches(relation_ids):
            marks = ",".join("?" * len(batch))
            db.execute(f"DELETE FROM relations WHERE id IN ({marks})", batch)
            db.execute(f"DELETE FROM evidence WHERE fact_kind = 'relation' AND fact_id IN ({marks})", batch)
        # a surviving fact described only by a deleted chunk takes a description from its remaining evidence
        if evidence_rows:
            db.execute(
                "UPDATE entities SET description = COALESCE((SELECT description FROM evidence"
                " WHERE fact_kind = 'entity' AND fact_id = entities.id AND description != ''"
                " ORDER BY length(description) DESC LIMIT 1), '')"
                " WHERE description NOT IN (SELECT description FROM evidence WHERE fact_kind = 'entity' AND fact_id = entities.id)"
            )
        removed = RemovedFacts(tuple(entity_ids), tuple(relation_ids), evidence_rows)
        if on_orphans is not None and (entity_ids or relation_ids):
            on_orphans(removed)
        return removed

    # --- reading ---------------------------------------------------------------------

    def _select(self, sql: str, ids: Sequence[str], extra: Sequence[Any] = ()) -> list[tuple]:
        rows: list[tuple] = []
        with self._lock:
            for batch in _batches(list(dict.fromkeys(ids))):
                rows += self._db.execute(sql.format(marks=",".join("?" * len(batch))), [*batch, *extra]).fetchall()
        return rows

    def get_entities(self, ids: Sequence[str]) -> dict[str, StoredEntity]:
        rows = self._select("SELECT id, name, type, description, attributes, aliases FROM entities WHERE id IN ({marks})", ids)
        return {r[0]: _entity(r) for r in rows}

    def entities_by_name(self, names: Sequence[str]) -> dict[str, list[StoredEntity]]:
        """Stored entities whose normalised name equals one of ``names`` (normalised here)."""
        keys = [normalize_name(n) for n in names]
        rows = self._select(
            "SELECT id, name, type, description, attributes, aliases, name_key FROM entities WHERE name_key IN ({marks})", keys
        )
        found: dict[str, list[StoredEntity]] = {}
        for r in rows:
            found.setdefault(r[6], []).append(_entity(r))
        return found

    def get_relations(self, ids: Sequence[str]) -> dict[str, StoredRelation]:
        rows = self._select("SELECT id, source_id, target_id, type, name, description FROM relations WHERE id IN ({marks})", ids)
        return {r[0]: StoredRelation(*r) for r in rows}

    def relations_touching(self, entity_ids: Sequence[str]) -> list[StoredRelation]:
        """Every relation with an endpoint in ``entity_ids`` (the one-hop neighbourhood)."""
        rows: list[tuple] = []
        ids = list(dict.fromkeys(entity_ids))
        with self._lock:
            for batch in _batches(ids):
                marks = ",".join("?" * len(batch))
                rows += self._db.execute(
                    f"SELECT id, source_id, target_id, type, name, description FROM relations WHERE source_id IN ({marks})"
                    f" UNION SELECT id, source_id, target_id, type, name, description FROM relations WHERE target_id IN ({marks})",
                    [*batch, *batch],
                ).fetchall()
        return [StoredRelation(*r) for r in dict.fromkeys(rows)]

    def evidence(self, fact_kind: str, fact_ids: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
        """fact id -> [(chunk_id, document_id, description)]."""
        rows = self._select(
            "SELECT fact_id, chunk_id, document_id, description FROM evidence WHERE fact_id IN ({marks}) AND fact_kind = ?",
            fact_ids,
            [fact_kind],
        )
        found: dict[str, list[tuple[str, str, str]]] = {}
        for fact_id, chunk_id, document_id, description in sorted(rows):
            found.setdefault(fact_id, []).append((chunk_id, document_id, description))
        return found

    def get_chunks(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        rows = self._select("SELECT id, document_id, text, metadata FROM chunks WHERE id IN ({marks})", ids)
        return {r[0]: StoredChunk(r[0], r[1], r[2], json.loads(r[3])) for r in rows}

    def chunk_links(self, chunk_ids: Sequence[str], document_ids: Sequence[str], limit: int) -> list[ChunkLink]:
        """The chunks one hop from ``chunk_ids`` (``GraphStore``, "Optional"), counted in SQLite."""
        if not chunk_ids or not document_ids or limit < 1:
            return []
        params = {"chunks": json.dumps(list(chunk_ids)), "documents": json.dumps(list(document_ids)), "limit": limit}
        with self._lock:
            rows = self._db.execute(_CHUNK_LINKS, params).fetchall()
        return [ChunkLink(*row) for row in rows]

    def facts_of_documents(self, document_ids: Sequence[str]) -> tuple[set[str], set[str]]:
        """(entity ids, relation ids) with evidence in these documents."""
        rows = self._select("SELECT fact_kind, fact_id FROM evidence WHERE document_id IN ({marks})", document_ids)
        return {r[1] for r in rows if r[0] == "entity"}, {r[1] for r in rows if r[0] == "relation"}

    def entity_ids(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT id FROM entities ORDER BY id")]

    def documents(self) -> set[str]:
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT DISTINCT document_id FROM evidence")}

    def fact_types(self) -> dict[str, dict[str, int]]:
        with self._lock:
            return {
                kind: dict(self._db.execute(f"SELECT type, COUNT(*) FROM {table} GROUP BY type ORDER BY type").fetchall())
                for kind, table in (("entity", "entities"), ("relation", "relations"))  # table names are constants
            }

    def counts(self) -> dict[str, int]:
        with self._lock:
            return {
                table: self._db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # table names are constants
                for table in ("entities", "relations", "evidence", "chunks")
            }
