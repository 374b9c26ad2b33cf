"""``[stores.sql] type = "postgres"``: the chunk store behind ``sql_text_search``, a tsvector table.

Chunks are rows of ``chunks`` in the knowledge base's schema; ``language`` is the
PostgreSQL text search configuration their ``tsvector`` is built with (``simple``,
the default, keeps words as written, like the SQLite store's ``standard``
analyzer). Ranking is ``ts_rank`` with length normalisation. See ``chunk_text``
for how Chinese, Japanese and Korean are indexed and queried.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from heta_framework.kb.documents import Chunk
from heta_framework.kb.stores import StoreType

from heta_plugin_postgres.chunk_text import ChunkTextTable, check_text_search_config
from heta_plugin_postgres.connection import PostgresOptions, open_database


@attrs.frozen
class PostgresSQLStoreConfig(PostgresOptions):
    """Options of the postgres chunk store (plus the connection options).

    ``language``: the text search configuration (``simple``, ``english``, ``french``, ...).
    """

    language: str = attrs.field(default="simple", validator=check_text_search_config)


class PostgresSQLStore:
    """``SQLStore`` on PostgreSQL: every write call one transaction, committed before it returns."""

    def __init__(self, table: ChunkTextTable):
        self._table = table

    @classmethod
    def open(cls, config: PostgresSQLStoreConfig | None, root: Path) -> PostgresSQLStore:
        config = config or PostgresSQLStoreConfig()
        return cls(ChunkTextTable(open_database(config, root), "chunks", config.language))

    @property
    def language(self) -> str:
        return self._table.config

    def upsert_chunks(self, chunks: Iterable[Chunk]) -> int:
        return self._table.upsert(chunks)

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        return self._table.delete_documents(document_ids)

    def count(self) -> int:
        return self._table.count()

    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]:
        return self._table.get_chunks(ids)

    def search_text(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]:
        return self._table.search(query, top_k, filters)

    def relative_paths(self) -> list[str]:
        return []  # everything is on the server

    def flush(self) -> None:
        pass  # every write call has committed before it returned

    def close(self) -> None:
        pass  # the pool is shared by every store of the process; closed at exit


SQL_STORE_TYPE = StoreType(
    "postgres", "sql", PostgresSQLStore.open, PostgresSQLStoreConfig,
    description="chunks in a PostgreSQL table, tsvector search (text search configuration per recipe)",
)
