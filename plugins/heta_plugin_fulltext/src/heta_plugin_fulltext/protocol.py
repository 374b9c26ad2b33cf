"""``TextIndexStore``: what the ``stores.text`` slot provides, whichever backend is behind it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from heta_framework.kb.documents import Chunk


@runtime_checkable
class TextIndexStore(Protocol):
    """A persistent BM25 index of chunk text, inside the knowledge-base folder.

    ``upsert`` replaces chunks with the same id and commits; ``search`` tokenizes
    the query with the index's analyzer and ORs the terms (any text is a valid
    query). ``filters`` match provenance keys exactly (``document_id``,
    ``source``, any chunk metadata key); a list value means any of them.
    """

    @property
    def backend(self) -> str: ...

    @property
    def analyzer(self) -> str: ...

    def upsert(self, chunks: Sequence[Chunk]) -> int: ...

    def delete_documents(self, document_ids: Sequence[str]) -> int: ...

    def search(self, text: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]: ...

    def terms(self, text: str) -> list[str]:
        """The index terms ``text`` becomes (what ``search`` looks up), duplicates removed."""
        ...

    def count(self) -> int: ...

    def relative_paths(self) -> list[str]: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...
