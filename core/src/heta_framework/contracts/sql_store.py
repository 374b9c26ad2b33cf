"""``SQLStore``: the contract of the ``stores.sql`` slot, the chunk store behind ``sql_text_search``.

``PersistChunks`` writes chunks through it and ``sql_text_search`` queries it;
the default backend is SQLite with FTS5 (``type = "sqlite"``). A server
backend (PostgreSQL) satisfies the same protocol and passes
``heta_framework.testing.conformance.SQLStoreSuite``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from heta_framework.contracts.documents import Chunk


@runtime_checkable
class SQLStore(Protocol):
    """Chunks by id, with keyword search over their text.

    Semantics every backend keeps:

    - Each write call is one transaction: ``upsert_chunks`` replaces chunks with
      the same id (text, provenance and metadata) and commits before it returns;
      if it raises, nothing of that call is written. It returns how many chunks
      it wrote.
    - ``delete_documents`` removes every chunk of those documents in one
      transaction and returns how many went; unknown documents are not an error.
    - ``get_chunks`` returns the chunks it has among ``ids`` (missing ids are
      simply absent), metadata exactly as written (JSON types).
    - ``search_text`` ORs the query's words (CJK runs become phrases); any text is
      a valid query and never raises (no words: no results). Results are
      ``(chunk, score)``, best first, higher is better, at most ``top_k``.
      ``filters`` match ``document_id``, ``source`` or any metadata key exactly; a
      list value means any of them, an empty list matches nothing. Every value is
      passed as a parameter, never spliced into SQL.
    - ``flush`` has nothing left to do for a transactional backend (writes are
      committed already) but must exist; ``close`` releases the connection.
    - One writer at a time (the knowledge base's writer lock); reads from several
      threads at once are safe and never see half of a write.
    """

    def upsert_chunks(self, chunks: Iterable[Chunk]) -> int: ...

    def delete_documents(self, document_ids: Sequence[str]) -> int: ...

    def count(self) -> int: ...

    def get_chunks(self, ids: Sequence[str]) -> dict[str, Chunk]: ...

    def search_text(self, query: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]: ...

    def relative_paths(self) -> list[str]:
        """The files this store owns, relative to the knowledge-base folder (for cleanup plans)."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...
