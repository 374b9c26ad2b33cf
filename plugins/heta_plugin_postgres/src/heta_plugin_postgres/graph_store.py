"""``[stores.graph] type = "postgres"``: entities, relations, evidence and evidence chunk text as tables.

The same model as heta-plugin-graph's ``sqlite_graph``: every fact (entity or
relation) has one ``graph_evidence`` row per chunk that supports it and lives
exactly as long as one does. Tables (in the knowledge base's schema, beside the
chunk store's ``chunks``): ``graph_entities``, ``graph_relations``,
``graph_evidence``, ``graph_chunks``. Every lookup the graph steps and
``heta_graph_search`` make is by an indexed column (ids, relation endpoints,
evidence by fact, document or chunk), and orphan removal looks only at the facts
a call touched, so neither a query nor a write scans a table.

The graph's entity and relation vectors are not here: they are collections of
``stores.vector`` (``type = "postgres"`` puts them in pgvector tables).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import psycopg
from heta_framework.kb.graph_store import (
    ChunkLink,
    GraphFacts,
    OrphanHandler,
    RemovedFacts,
    StoredChunk,
    StoredEntity,
    StoredRelation,
)
from heta_framework.kb.stores import StoreType
from psycopg import sql
from psycopg.types.json import Jsonb

from heta_plugin_postgres.connection import PostgresDatabase, PostgresOptions, open_database

ENTITIES, RELATIONS, EVIDENCE, CHUNKS = "graph_entities", "graph_relations", "graph_evidence", "graph_chunks"

_SCHEMA = (
    ("CREATE TABLE IF NOT EXISTS {entities} (id text PRIMARY KEY, name text NOT NULL, type text NOT NULL, "
    "description text NOT NULL, attributes jsonb NOT NULL, aliases jsonb NOT NULL)"),
    "CREATE INDEX IF NOT EXISTS graph_entities_type ON {entities} (type)",
    ("CREATE TABLE IF NOT EXISTS {relations} (id text PRIMARY KEY, source_id text NOT NULL, target_id text NOT NULL, "
    "type text NOT NULL, name text NOT NULL, description text NOT NULL)"),
    "CREATE INDEX IF NOT EXISTS graph_relations_source ON {relations} (source_id)",
    "CREATE INDEX IF NOT EXISTS graph_relations_target ON {relations} (target_id)",
    "CREATE INDEX IF NOT EXISTS graph_relations_type ON {relations} (type)",
    ("CREATE TABLE IF NOT EXISTS {evidence} (fact_kind text NOT NULL CHECK (fact_kind IN ('entity', 'relation')), "
    "fact_id text NOT NULL, chunk_id text NOT NULL, document_id text NOT NULL, description text NOT NULL, "
    "PRIMARY KEY (fact_kind, fact_id, chunk_id))"),
    "CREATE INDEX IF NOT EXISTS graph_evidence_document ON {evidence} (document_id)",
    "CREATE INDEX IF NOT EXISTS graph_evidence_chunk ON {evidence} (chunk_id)",
    ("CREATE TABLE IF NOT EXISTS {chunks} (id text PRIMARY KEY, document_id text NOT NULL, text text NOT NULL, "
    "metadata jsonb NOT NULL)"),
    "CREATE INDEX IF NOT EXISTS graph_chunks_document ON {chunks} (document_id)",
)


#: ``GraphStore.chunk_links`` in one statement (sqlite_graph's, in PostgreSQL's words): the link rows of the
#: neighbourhood (rank 0: a seed's own evidence, keyed by the seed; 1: a touching relation's, by the relation;
#: 2: a neighbour's, by the neighbour), counted per chunk, then each chunk's first link. COLLATE "C" orders ids by
#: code point, as Python and SQLite do, whatever the database's collation
_CHUNK_LINKS = """
WITH
 seeds AS (
   SELECT DISTINCT fact_id AS id FROM {evidence}
   WHERE chunk_id = ANY(%(chunks)s) AND fact_kind = 'entity' AND document_id = ANY(%(documents)s)),
 touching AS (
   SELECT id, source_id AS seed, target_id AS other FROM {relations} WHERE source_id IN (SELECT id FROM seeds)
   UNION ALL
   SELECT id, target_id, source_id FROM {relations}
   WHERE target_id IN (SELECT id FROM seeds) AND source_id NOT IN (SELECT id FROM seeds)),
 neighbours AS (
   SELECT DISTINCT ON (other) other AS id, seed, id AS relation FROM touching
   WHERE other NOT IN (SELECT id FROM seeds) ORDER BY other, id COLLATE "C"),
 links AS (
   SELECT chunk_id, 0 AS rank, fact_id AS key, fact_id AS entity, text '' AS relation FROM {evidence}
   WHERE fact_kind = 'entity' AND fact_id IN (SELECT id FROM seeds)
   UNION ALL
   SELECT e.chunk_id, 1, t.id, t.seed, t.id FROM touching t JOIN {evidence} e ON e.fact_kind = 'relation' AND e.fact_id = t.id
   UNION ALL
   SELECT e.chunk_id, 2, n.id, n.seed, n.relation FROM neighbours n JOIN {evidence} e ON e.fact_kind = 'entity' AND e.fact_id = n.id),
 top AS (
   SELECT chunk_id, count(*) AS n FROM links WHERE NOT chunk_id = ANY(%(chunks)s)
   GROUP BY chunk_id ORDER BY n DESC, chunk_id COLLATE "C" LIMIT %(limit)s),
 firsts AS (
   SELECT DISTINCT ON (chunk_id) chunk_id, entity, relation FROM links
   WHERE chunk_id IN (SELECT chunk_id FROM top) ORDER BY chunk_id, rank, key COLLATE "C")
SELECT top.chunk_id, top.n, firsts.entity, firsts.relation FROM top JOIN firsts USING (chunk_id)
ORDER BY top.n DESC, top.chunk_id COLLATE "C"
"""


@attrs.frozen
class PostgresGraphConfig(PostgresOptions):
    """Options of the postgres graph store: the connection options every postgres store takes."""


def _distinct(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(str(i) for i in ids))


class PostgresGraphStore:
    """``GraphStore`` on PostgreSQL: each write call one transaction (the orphan handler's included)."""

    def __init__(self, database: PostgresDatabase):
        self._database = database
        self._tables = {
            "entities": database.table(ENTITIES), "relations": database.table(RELATIONS),
            "evidence": database.table(EVIDENCE), "chunks": database.table(CHUNKS),
        }
        with database.connection() as conn:
            # CREATE ... IF NOT EXISTS races between processes opening the same knowledge base
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"heta-graph:{database.schema}",))
            for statement in _SCHEMA:
                conn.execute(self._sql(statement))

    @classmethod
    def open(cls, config: PostgresGraphConfig | None, root: Path) -> PostgresGraphStore:
        return cls(open_database(config or PostgresGraphConfig(), root))

    def _sql(self, statement: str) -> sql.Composed:
        return sql.SQL(statement).format(**self._tables)

    def relative_paths(self) -> list[str]:
        return []  # everything is on the server

    def flush(self) -> None:
        pass  # every write call has committed before it returned

    def close(self) -> None:
        pass  # the pool is shared by every store of the process; closed at exit

    # --- writing ---------------------------------------------------------------------

    def write_draft(
        self,
        draft: GraphFacts,
        chunks: Iterable[StoredChunk],
        *,
        replace_documents: Sequence[str] = (),
        on_orphans: OrphanHandler | None = None,
    ) -> RemovedFacts:
        """Upsert a draft with its evidence and evidence chunks, in one transaction (see ``GraphStore``)."""
        chunk_rows = [(c.id, c.document_id, c.text, Jsonb(dict(c.metadata))) for c in chunks]
        entity_rows = [
            (e.id, e.name, e.type, e.description, Jsonb(dict(e.attributes)), Jsonb(list(e.aliases)))
            for e in draft.entities
        ]
        relation_rows = [(r.id, r.source_id, r.target_id, r.type, r.name, r.description) for r in draft.relations]
        evidence_rows = [("entity", e.id, ev.chunk_id, ev.document_id, ev.description)
                         for e in draft.entities for ev in e.evidence]
        evidence_rows += [("relation", r.id, ev.chunk_id, ev.document_id, ev.description)
                          for r in draft.relations for ev in r.evidence]
        with self._database.connection() as conn:
            touched = self._delete_evidence_of(conn, replace_documents)
            with conn.cursor() as cursor:
                cursor.executemany(self._sql(
                    "INSERT INTO {chunks} (id, document_id, text, metadata) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (id) DO UPDATE SET document_id = EXCLUDED.document_id, text = EXCLUDED.text, "
                    "metadata = EXCLUDED.metadata"), chunk_rows)
                # an existing entity keeps its name, and its description and aliases unless they were empty
                cursor.executemany(self._sql(
                    "INSERT INTO {entities} AS e (id, name, type, description, attributes, aliases) "
                    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
                    "description = CASE WHEN e.description = '' THEN EXCLUDED.description ELSE e.description END, "
                    "aliases = CASE WHEN e.aliases = '[]'::jsonb THEN EXCLUDED.aliases ELSE e.aliases END"),
                    entity_rows)
                cursor.executemany(self._sql(
                    "INSERT INTO {relations} AS r (id, source_id, target_id, type, name, description) "
                    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
                    "description = CASE WHEN r.description = '' THEN EXCLUDED.description ELSE r.description END"),
                    relation_rows)
                cursor.executemany(self._sql(
                    "INSERT INTO {evidence} (fact_kind, fact_id, chunk_id, document_id, description) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (fact_kind, fact_id, chunk_id) DO UPDATE SET "
                    "document_id = EXCLUDED.document_id, description = EXCLUDED.description"), evidence_rows)
            touched_entities = touched["entity"] | {e.id for e in draft.entities}
            touched_relations = touched["relation"] | {r.id for r in draft.relations}
            return self._remove_orphans(conn, touched_entities, touched_relations, on_orphans, evidence_rows=0)

    def delete_documents(self, document_ids: Sequence[str], on_orphans: OrphanHandler | None = None) -> RemovedFacts:
        """Remove the documents' evidence and chunks, and every fact no other chunk supports."""
        document_ids = _distinct(document_ids)
        if not document_ids:
            return RemovedFacts()
        with self._database.connection() as conn:
            touched = self._delete_evidence_of(conn, document_ids)
            conn.execute(self._sql("DELETE FROM {chunks} WHERE document_id = ANY(%s)"), (document_ids,))
            removed = self._remove_orphans(conn, touched["entity"], touched["relation"], on_orphans,
                                           evidence_rows=touched["rows"])
            self._refresh_descriptions(conn, sorted(touched["entity"] - set(removed.entity_ids)))
            return removed

    def _delete_evidence_of(self, conn: psycopg.Connection, document_ids: Sequence[str]) -> dict[str, Any]:
        """Delete the documents' evidence; the facts it supported (the only ones that can be orphaned now)."""
        touched: dict[str, Any] = {"entity": set(), "relation": set(), "rows": 0}
        document_ids = _distinct(document_ids)
        if not document_ids:
            return touched
        rows = conn.execute(
            self._sql("DELETE FROM {evidence} WHERE document_id = ANY(%s) RETURNING fact_kind, fact_id"),
            (document_ids,),
        ).fetchall()
        for kind, fact_id in rows:
            touched[kind].add(fact_id)
        touched["rows"] = len(rows)
        return touched

    def _remove_orphans(self, conn: psycopg.Connection, entity_ids: set[str], relation_ids: set[str],
                        on_orphans: OrphanHandler | None, evidence_rows: int) -> RemovedFacts:
        # a stored fact always has evidence, so only the facts this call touched can have lost their last row
        orphan_entities = [row[0] for row in conn.execute(self._sql(
            "SELECT id FROM {entities} e WHERE e.id = ANY(%s) AND NOT EXISTS "
            "(SELECT 1 FROM {evidence} v WHERE v.fact_kind = 'entity' AND v.fact_id = e.id) ORDER BY id COLLATE \"C\""),
            (sorted(entity_ids),))]
        # a relation goes with its last evidence, or with either endpoint
        orphan_relations = [row[0] for row in conn.execute(self._sql(
            "SELECT id FROM {relations} r WHERE (r.id = ANY(%(relations)s) AND ("
            " NOT EXISTS (SELECT 1 FROM {evidence} v WHERE v.fact_kind = 'relation' AND v.fact_id = r.id)"
            " OR NOT EXISTS (SELECT 1 FROM {evidence} v WHERE v.fact_kind = 'entity' AND v.fact_id = r.source_id)"
            " OR NOT EXISTS (SELECT 1 FROM {evidence} v WHERE v.fact_kind = 'entity' AND v.fact_id = r.target_id)))"
            " OR r.source_id = ANY(%(entities)s) OR r.target_id = ANY(%(entities)s) ORDER BY id COLLATE \"C\""),
            {"relations": sorted(relation_ids), "entities": orphan_entities})]
        if orphan_entities:
            conn.execute(self._sql("DELETE FROM {entities} WHERE id = ANY(%s)"), (orphan_entities,))
        if orphan_relations:
            conn.execute(self._sql("DELETE FROM {relations} WHERE id = ANY(%s)"), (orphan_relations,))
            conn.execute(self._sql("DELETE FROM {evidence} WHERE fact_kind = 'relation' AND fact_id = ANY(%s)"),
                         (orphan_relations,))
        removed = RemovedFacts(tuple(orphan_entities), tuple(orphan_relations), evidence_rows)
        if on_orphans is not None and (orphan_entities or orphan_relations):
            on_orphans(removed)  # inside the transaction: raising rolls the whole call back
        return removed

    def _refresh_descriptions(self, conn: psycopg.Connection, entity_ids: list[str]) -> None:
        """A surviving entity whose description no remaining evidence gives takes the longest one that does."""
        if not entity_ids:
            return
        conn.execute(self._sql(
            "UPDATE {entities} e SET description = COALESCE((SELECT v.description FROM {evidence} v "
            " WHERE v.fact_kind = 'entity' AND v.fact_id = e.id AND v.description <> '' "
            " ORDER BY length(v.description) DESC, v.description COLLATE \"C\" LIMIT 1), '') "
            "WHERE e.id = ANY(%s) AND e.description NOT IN "
            " (SELECT v.description FROM {evidence} v WHERE v.fact_kind = 'entity' AND v.fact_id = e.id)"),
            (entity_ids,))

    # --- reading ---------------------------------------------------------------------

    def _rows(self, statement: str, *params: Any) -> list[tuple]:
        with self._database.connection() as conn:
            return conn.execute(self._sql(statement), params).fetchall()

    def get_entities(self, ids: Sequence[str]) -> dict[str, StoredEntity]:
        rows = self._rows("SELECT id, name, type, description, attributes, aliases FROM {entities} WHERE id = ANY(%s)",
                          _distinct(ids))
        return {r[0]: StoredEntity(r[0], r[1], r[2], r[3], r[4], tuple(r[5])) for r in rows}

    def get_relations(self, ids: Sequence[str]) -> dict[str, StoredRelation]:
        rows = self._rows("SELECT id, source_id, target_id, type, name, description FROM {relations} WHERE id = ANY(%s)",
                          _distinct(ids))
        return {r[0]: StoredRelation(*r) for r in rows}

    def relations_touching(self, entity_ids: Sequence[str]) -> list[StoredRelation]:
        """Every relation with an endpoint in ``entity_ids`` (the one-hop neighbourhood), by id."""
        ids = _distinct(entity_ids)
        # two index scans (source, target) rather than one OR that the planner may answer with a scan
        rows = self._rows(
            "SELECT id, source_id, target_id, type, name, description FROM {relations} WHERE source_id = ANY(%s) "
            "UNION SELECT id, source_id, target_id, type, name, description FROM {relations} WHERE target_id = ANY(%s)",
            ids, ids)
        return [StoredRelation(*r) for r in sorted(rows)]  # by id, in code-point order (as sqlite_graph's UNION)

    def evidence(self, fact_kind: str, fact_ids: Sequence[str]) -> dict[str, list[tuple[str, str, str]]]:
        """fact id -> ``[(chunk_id, document_id, description)]``, sorted by chunk id."""
        rows = self._rows(
            "SELECT fact_id, chunk_id, document_id, description FROM {evidence} WHERE fact_kind = %s AND fact_id = ANY(%s)",
            fact_kind, _distinct(fact_ids))
        found: dict[str, list[tuple[str, str, str]]] = {}
        for fact_id, chunk_id, document_id, description in sorted(rows):  # Python's order: code points, as SQLite's
            found.setdefault(fact_id, []).append((chunk_id, document_id, description))
        return found

    def get_chunks(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        rows = self._rows("SELECT id, document_id, text, metadata FROM {chunks} WHERE id = ANY(%s)", _distinct(ids))
        return {r[0]: StoredChunk(r[0], r[1], r[2], r[3]) for r in rows}

    def chunk_links(self, chunk_ids: Sequence[str], document_ids: Sequence[str], limit: int) -> list[ChunkLink]:
        """The chunks one hop from ``chunk_ids`` (``GraphStore``, "Optional"), counted by the server."""
        if not chunk_ids or not document_ids or limit < 1:
            return []
        params = {"chunks": _distinct(chunk_ids), "documents": _distinct(document_ids), "limit": limit}
        with self._database.connection() as conn:
            rows = conn.execute(self._sql(_CHUNK_LINKS), params).fetchall()
        return [ChunkLink(chunk_id, int(count), entity, relation) for chunk_id, count, entity, relation in rows]

    def facts_of_documents(self, document_ids: Sequence[str]) -> tuple[set[str], set[str]]:
        """(entity ids, relation ids) with evidence in these documents (as ``sqlite_graph`` offers)."""
        rows = self._rows("SELECT fact_kind, fact_id FROM {evidence} WHERE document_id = ANY(%s)", _distinct(document_ids))
        return {r[1] for r in rows if r[0] == "entity"}, {r[1] for r in rows if r[0] == "relation"}

    def documents(self) -> set[str]:
        return {r[0] for r in self._rows("SELECT DISTINCT document_id FROM {evidence}")}

    def entity_ids(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT id FROM {entities} ORDER BY id COLLATE \"C\"")]

    def fact_types(self) -> dict[str, dict[str, int]]:
        return {
            "entity": dict(self._rows("SELECT type, count(*) FROM {entities} GROUP BY type")),
            "relation": dict(self._rows("SELECT type, count(*) FROM {relations} GROUP BY type")),
        }

    def counts(self) -> dict[str, int]:
        row = self._rows(
            "SELECT (SELECT count(*) FROM {entities}), (SELECT count(*) FROM {relations}), "
            "(SELECT count(*) FROM {evidence}), (SELECT count(*) FROM {chunks})")[0]
        return dict(zip(("entities", "relations", "evidence", "chunks"), row, strict=True))


GRAPH_STORE_TYPE = StoreType(
    "postgres", "graph", PostgresGraphStore.open, PostgresGraphConfig,
    description="PostgreSQL tables: entities, relations, evidence and evidence chunk text (indexed by id and endpoint)",
)
