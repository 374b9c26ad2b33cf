"""``[stores.text] type = "postgres"``: the text index behind ``full_text_search``, a tsvector table.

Its own table (``text_chunks``), so the two keyword modes can be built, rebuilt and
removed independently, ranked by ``ts_rank`` with length normalisation 1, as the
SQL chunk store. Cover density (``ts_rank_cd``) was the first choice and scored
0.258 MRR@10 against 0.631 for ``ts_rank`` on the 10k bench's 400 known-item
queries (the same tsvectors and queries; Whoosh's BM25F: 0.630). ``analyzer``
takes the full-text plugin's names and maps each to the
PostgreSQL configuration that does the same (``standard``/``chinese``/``auto`` ->
``simple``, CJK as character pairs; ``english`` -> ``english``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from heta_framework.kb.documents import Chunk
from heta_framework.kb.stores import StoreType

from heta_plugin_postgres.chunk_text import TEXT_SEARCH_CONFIGS, ChunkTextTable
from heta_plugin_postgres.connection import PostgresOptions, open_database

#: the full-text plugin's analyzers with no PostgreSQL configuration of their own
_SIMPLE_ANALYZERS = ("standard", "chinese", "auto")
ANALYZERS = _SIMPLE_ANALYZERS + tuple(name for name in TEXT_SEARCH_CONFIGS if name != "simple")


def _analyzer(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if value not in ANALYZERS:
        raise ValueError(f"analyzer must be one of {', '.join(ANALYZERS)}, got {value!r}")


def text_search_config(analyzer: str) -> str:
    return "simple" if analyzer in _SIMPLE_ANALYZERS else analyzer


@attrs.frozen
class PostgresTextIndexConfig(PostgresOptions):
    """Options of the postgres text index (plus the connection options).

    ``analyzer``: ``english`` (default, as the full-text plugin), ``standard``, ``chinese``,
    ``auto`` (the last three: PostgreSQL's ``simple``), or any PostgreSQL text search
    configuration name (``french``, ``german``, ...).
    """

    analyzer: str = attrs.field(default="english", validator=_analyzer)


class PostgresTextIndex:
    """``TextIndexStore`` on PostgreSQL."""

    backend = "postgres"

    def __init__(self, table: ChunkTextTable, analyzer: str):
        self._table = table
        self._analyzer = analyzer

    @classmethod
    def open(cls, config: PostgresTextIndexConfig | None, root: Path) -> PostgresTextIndex:
        config = config or PostgresTextIndexConfig()
        database = open_database(config, root)
        return cls(ChunkTextTable(database, "text_chunks", text_search_config(config.analyzer)),
                   config.analyzer)

    @property
    def analyzer(self) -> str:
        return self._analyzer

    def upsert(self, chunks: Sequence[Chunk]) -> int:
        return self._table.upsert(chunks)

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        return self._table.delete_documents(document_ids)

    def search(self, text: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]:
        return self._table.search(text, top_k, filters)

    def terms(self, text: str) -> list[str]:
        return self._table.terms(text)

    def count(self) -> int:
        return self._table.count()

    def relative_paths(self) -> list[str]:
        return []  # everything is on the server

    def flush(self) -> None:
        pass  # every write call has committed before it returned

    def close(self) -> None:
        pass  # the pool is shared by every store of the process; closed at exit


TEXT_STORE_TYPE = StoreType(
    "postgres", "text", PostgresTextIndex.open, PostgresTextIndexConfig,
    description="a PostgreSQL tsvector table ranked by ts_rank",
)
