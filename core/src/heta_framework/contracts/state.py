"""``KnowledgeBaseState``: the contract for a knowledge base's own state, beside its stores.

A knowledge base keeps four things of its own: the document catalog, the run
record (runs, step status, artifacts, issues, search assets), caches (computed
embeddings, language-model answers) and the writer lock. ``KnowledgeBase``,
``RunRecord`` and the steps' caches reach them only through this protocol. The
folder (``kb/folder_state.py``: ``catalog.json``, ``run_record.json``,
``removed.json``, SQLite caches, ``kb/lock.py``) is the default; a server backend
(PostgreSQL) holds them instead when the recipe says ``[stores.state] type = ...``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Protocol, Self, runtime_checkable

from heta_framework.contracts.documents import DocumentRecord


@runtime_checkable
class WriterLockProtocol(Protocol):
    """One writer per knowledge base across processes (``kb/lock.py``'s ``WriterLock`` is the folder's).

    ``acquire(wait=None)`` fails at once with ``KnowledgeBaseLockedError`` naming
    the holder when another writer has the lock; ``wait=seconds`` retries until
    then. A holder that died releases it (the folder uses ``flock``; a server, a
    session-scoped advisory lock). Used as a context manager it releases on exit.
    """

    #: the record of a previous holder that died without releasing the lock, found when this one took it
    stale_holder: dict[str, Any] | None

    @property
    def held(self) -> bool: ...

    def acquire(self, wait: float | None = None) -> Self: ...

    async def acquire_async(self, wait: float | None = None) -> Self:
        """As ``acquire``, but waits without blocking the event loop."""
        ...

    def release(self) -> None: ...

    def holder(self) -> dict[str, Any]:
        """Who holds the lock: operation, process, host, since when (``{}`` when free)."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc_info: object) -> None: ...


@runtime_checkable
class CacheProtocol(Protocol):
    """A named key-value cache (``embeddings``, ``llm``): values are bytes, keys are content hashes.

    A cache may forget anything at any time (it is never the only copy of
    anything); writes of one ``put_many`` call land together.
    """

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]: ...

    def put_many(self, items: Mapping[str, bytes]) -> None: ...


@runtime_checkable
class KnowledgeBaseState(Protocol):
    """Catalog, run record, caches and writer lock of one knowledge base.

    - ``read_*`` return what the last ``write_*`` (from any process) committed;
      a write replaces the whole value at once, so readers never see half of one
      (the folder writes a temporary file and renames it). The catalog, the removed
      documents and the run record are written separately (the folder always did).
    - ``version()`` changes whenever the catalog or run record changed, so an
      open reader knows to read them again (the folder uses each file's inode,
      modification time and size).
    - Only the holder of ``writer_lock`` writes; readers need no lock.
    """

    def read_catalog(self) -> dict[str, DocumentRecord]: ...

    def write_catalog(self, records: Mapping[str, DocumentRecord]) -> None: ...

    def read_run_record(self) -> dict[str, Any] | None:
        """The run record's JSON value, or ``None`` before the first build."""
        ...

    def write_run_record(self, data: Mapping[str, Any]) -> None: ...

    def clear_run_record(self) -> None:
        """Forget the run record (``KnowledgeBase.delete``): the next ``read_run_record`` returns ``None``."""
        ...

    def read_removed(self) -> dict[str, dict[str, Any]]:
        """Documents removed with ``delete_documents`` (id -> source, content hash, time), so a build does not bring them back."""
        ...

    def write_removed(self, removed: Mapping[str, Mapping[str, Any]]) -> None: ...

    def version(self) -> Hashable: ...

    def writer_lock(self, operation: str) -> WriterLockProtocol: ...

    def writer_active(self) -> bool:
        """Whether a writer holds the lock right now (another process, or another lock object of this one)."""
        ...

    def cache(self, name: str) -> CacheProtocol: ...

    def close(self) -> None:
        """Release connections and files; the state opens them again when used after ``close``."""
        ...
