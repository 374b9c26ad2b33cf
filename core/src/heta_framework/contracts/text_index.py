"""``TextIndexStore``: the contract of the ``stores.text`` slot (Whoosh, tantivy, or a server-backed index).

Steps (``IndexFullText``) and engines (``full_text_search``) only call these
methods, so any backend that satisfies the protocol, and passes
``heta_framework.testing.conformance.TextIndexStoreSuite``, can sit behind the slot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from heta_framework.contracts.documents import Chunk


@runtime_checkable
class TextIndexStore(Protocol):
    """A persistent BM25 index of chunk text, inside the knowledge-base folder.

    Semantics every backend keeps:

    - ``upsert`` replaces chunks with the same id and commits before it returns:
      a search right after it (from this object or a fresh one opened on the same
      folder) sees the new text. It returns how many chunks it wrote.
    - ``delete_documents`` removes every chunk of those documents, commits, and
      returns how many chunks went; unknown documents are not an error.
    - ``search`` tokenizes the query with the index's analyzer and ORs the terms:
      any text is a valid query (quotes, operators, SQL, empty) and never raises;
      results are ``(chunk, score)`` best first, higher scores better, at most
      ``top_k``. ``filters`` match provenance keys exactly (``document_id``,
      ``source``, any chunk metadata key); a list value means any of them, an
      empty list matches nothing.
    - ``flush`` makes everything written durable (the runner calls it after each
      step); ``close`` releases files and locks, after which the object is not used.
    - One writer at a time (the knowledge base's writer lock guarantees it);
      searches from several threads at once are safe.

    Optional: a class attribute ``searches_in_place = True`` says a search is short
    (well under a millisecond of Python) and spends its heavy part outside the GIL, so
    ``full_text_search`` calls it on the event loop instead of handing it to a worker
    thread. The hand-off costs more than such a search, and threads waiting for the
    GIL behind each other slow concurrent queries down (tantivy, 10k chunks: 8 queries
    in flight 787 queries/s through a thread, 1,811-2,008 in place; one at a time 1,371
    and 2,060). Such a search must never wait for a writer. Without the attribute
    searches run in a worker thread, so the event loop stays responsive.

    Optional: ``concurrent_searches = N`` (a class or instance attribute) lets at most
    N searches of the store run at once; the others wait on the event loop. For a
    pure-Python search, threads side by side in one process only take turns on the
    GIL and the turns cost (Whoosh, 10k chunks, 8 queries in flight, alternating:
    144-155 queries/s with free threads, 156-159 one at a time). Whoosh therefore
    runs one search in the process and hands those made beside it to helper
    processes: its N is 1 + ``search_processes``.
    """

    @property
    def backend(self) -> str:
        """The backend's name as recipes spell it (``"whoosh"``)."""
        ...

    @property
    def analyzer(self) -> str:
        """The analyzer the index was built with (``"english"``, ``"cjk"``...)."""
        ...

    def upsert(self, chunks: Sequence[Chunk]) -> int: ...

    def delete_documents(self, document_ids: Sequence[str]) -> int: ...

    def search(self, text: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]: ...

    def terms(self, text: str) -> list[str]:
        """The index terms ``text`` becomes (what ``search`` looks up), duplicates removed."""
        ...

    def count(self) -> int:
        """How many chunks the index holds."""
        ...

    def relative_paths(self) -> list[str]:
        """The files/folders this store owns, relative to the knowledge-base folder (for cleanup plans)."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...
