"""A table of chunks with a ``tsvector`` column: what the ``sql`` and ``text`` store types share.

Analysis is split so that Chinese, Japanese and Korean behave exactly as in core's
SQLite store: the text is indexed with every CJK character as its own token
(``heta_framework.builtin.stores.sqlite_fts.fts_body``), and a query's CJK runs
become overlapping character pairs (``heta_framework.text.analysis.analyze``), each
searched as a two-character phrase (``'上' <-> '海'``). Words in other scripts go
through the PostgreSQL text search configuration (``simple``: lower-cased as
written; ``english``, ``french``...: stop words and Snowball stems). The query's
terms are ORed, as every keyword mode does.

Every value, the query terms and the configuration name included, is a parameter;
table names are validated identifiers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from heta_framework.builtin.stores.sqlite_fts import fts_body
from heta_framework.kb.documents import Chunk
from heta_framework.text.analysis import analyze
from heta_framework.text.languages import CJK_RANGES
from psycopg import sql

from heta_plugin_postgres.connection import PostgresDatabase
from heta_plugin_postgres.filters import filter_clause

# chunk columns a filter may name directly; other keys are metadata keys
FILTER_COLUMNS = ("document_id", "source")

#: PostgreSQL's built-in text search configurations (``SELECT cfgname FROM pg_ts_config``)
TEXT_SEARCH_CONFIGS = (
    "simple", "arabic", "armenian", "basque", "catalan", "danish", "dutch", "english", "estonian", "finnish",
    "french", "german", "greek", "hindi", "hungarian", "indonesian", "irish", "italian", "lithuanian", "nepali",
    "norwegian", "portuguese", "romanian", "russian", "serbian", "spanish", "swedish", "tamil", "turkish", "yiddish",
)

#: ts_rank normalisation 1: divide by 1 + log(document length), BM25's length penalty in spirit
_NORMALISATION = 1

_COLUMNS = sql.SQL("id, document_id, chunk_index, text, start_offset, end_offset, source, page, metadata")


def check_text_search_config(instance: Any, attribute: Any, value: str) -> None:
    if value not in TEXT_SEARCH_CONFIGS:
        raise ValueError(f"{attribute.name} must be a PostgreSQL text search configuration, one of "
                         f"{', '.join(TEXT_SEARCH_CONFIGS)}; got {value!r}")


def query_phrases(query: str) -> list[str]:
    """The query's terms as phrases for ``phraseto_tsquery``: words, and CJK pairs with their characters spaced."""
    terms: list[str] = []
    for term in analyze(query, None):
        if all(_is_cjk(char) for char in term):
            terms.append(" ".join(term))
        else:
            terms.append(term)
    return list(dict.fromkeys(terms))


_CJK_CHAR = re.compile(f"[{CJK_RANGES}]")


def _is_cjk(char: str) -> bool:
    return _CJK_CHAR.match(char) is not None


class ChunkTextTable:
    """One chunk table in the knowledge base's schema, its tsvector built with ``config``."""

    def __init__(self, database: PostgresDatabase, table: str, config: str):
        self._database = database
        self._name = table
        self._table = database.table(table)
        self.config = config
        with database.connection() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"heta-chunks:{database.schema}.{table}",))
            conn.execute(sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (id text PRIMARY KEY, document_id text NOT NULL, "
                "chunk_index integer NOT NULL, text text NOT NULL, start_offset integer NOT NULL, "
                "end_offset integer NOT NULL, source text NOT NULL, page integer, metadata jsonb NOT NULL, "
                "body tsvector NOT NULL)"
            ).format(self._table))
            conn.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING gin (body)")
                         .format(sql.Identifier(f"{table}_body"), self._table))
            conn.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (document_id)")
                         .format(sql.Identifier(f"{table}_document"), self._table))

    def upsert(self, chunks: Iterable[Chunk]) -> int:
        written = 0
        statement = sql.SQL(
            "INSERT INTO {} (id, document_id, chunk_index, text, start_offset, end_offset, source, page, metadata, body) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, to_tsvector(%s::regconfig, %s)) "
            "ON CONFLICT (id) DO UPDATE SET document_id = EXCLUDED.document_id, chunk_index = EXCLUDED.chunk_index, "
            "text = EXCLUDED.text, start_offset = EXCLUDED.start_offset, end_offset = EXCLUDED.end_offset, "
            "source = EXCLUDED.source, page = EXCLUDED.page, metadata = EXCLUDED.metadata, body = EXCLUDED.body"
        ).format(self._table)
        # one transaction: a chunk source that fails half way leaves nothing of this call behind
        with self._database.connection() as conn, conn.cursor() as cursor:
            batch: list[tuple[Any, ...]] = []
            for c in chunks:
                batch.append((c.id, c.document_id, c.index, c.text, c.start, c.end, c.source, c.page,
                              json.dumps(dict(c.metadata), ensure_ascii=False), self.config, fts_body(c.text)))
                if len(batch) >= 500:
                    cursor.executemany(statement, batch)
                    written += len(batch)
                    batch = []
            if batch:
                cursor.executemany(statement, batch)
                written += len(batch)
        return written

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        if not document_ids:
            return 0
        with self._database.connection() as conn:
            return conn.execute(sql.SQL("DELETE FROM {} WHERE document_id = ANY(%s)").format(self._table),
                                ([str(d) for d in document_ids],)).rowcount

    def count(self) -> int:
        with self._database.connection() as conn:
            return conn.execute(sql.SQL("SELECT count(*) FROM {}").format(self._table)).fetchone()[0]

    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        if not ids:
            return {}
        with self._database.connection() as conn:
            rows = conn.execute(sql.SQL("SELECT {} FROM {} WHERE id = ANY(%s)").format(_COLUMNS, self._table),
                                ([str(i) for i in ids],)).fetchall()
        return {row[0]: row_to_chunk(row) for row in rows}

    def terms(self, query: str) -> list[str]:
        """The lexemes ``query`` is searched for (after the configuration's stemming and stop words)."""
        phrases = query_phrases(query)
        if not phrases:
            return []
        with self._database.connection() as conn:
            rows = conn.execute(
                "SELECT DISTINCT unnest(tsvector_to_array(to_tsvector(%s::regconfig, phrase))) AS lexeme, "
                "min(ordinality) FROM unnest(%s::text[]) WITH ORDINALITY AS p(phrase, ordinality) GROUP BY lexeme "
                "ORDER BY 2, 1",
                (self.config, phrases),
            ).fetchall()
        return list(dict.fromkeys(row[0] for row in rows))

    def search(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]:
        phrases = query_phrases(query)
        clause = filter_clause(filters, FILTER_COLUMNS)
        if not phrases or clause is None or top_k <= 0:
            return []
        where, params = clause
        statement = sql.SQL(
            "WITH q AS (SELECT string_agg('(' || t::text || ')', ' | ')::tsquery AS query FROM "
            "(SELECT phraseto_tsquery(%s::regconfig, phrase) AS t FROM unnest(%s::text[]) AS phrase) AS terms "
            "WHERE numnode(t) > 0) "
            "SELECT {columns}, ts_rank(c.body, q.query, %s) AS score FROM {table} AS c, q "
            "WHERE q.query IS NOT NULL AND c.body @@ q.query AND {where} "
            "ORDER BY score DESC, c.id LIMIT %s"
        ).format(columns=sql.SQL(", ").join(sql.SQL("c.") + sql.Identifier(name) for name in (
            "id", "document_id", "chunk_index", "text", "start_offset", "end_offset", "source", "page", "metadata")),
            table=self._table, where=where)
        with self._database.connection() as conn:
            rows = conn.execute(statement, [self.config, phrases, _NORMALISATION, *params, int(top_k)]).fetchall()
        return [(row_to_chunk(row[:-1]), float(row[-1])) for row in rows]


def row_to_chunk(row: Sequence[Any]) -> Chunk:
    return Chunk(id=row[0], document_id=row[1], index=row[2], text=row[3], start=row[4], end=row[5],
                 source=row[6], page=row[7], metadata=dict(row[8]))
