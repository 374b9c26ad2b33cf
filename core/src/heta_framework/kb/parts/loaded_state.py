"""The run record, catalog and removed documents as this process last read them, and the writer
sessions that change them.

Another process may build the knowledge base while this one has it open. Every commit of its run
record or catalog changes ``state.version()`` (the folder: a renamed file's inode, mtime and size):
then the state is read again and the stores reopen on what the other process wrote.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from heta_framework.contracts.documents import DocumentRecord
from heta_framework.contracts.record import RunRecord
from heta_framework.contracts.state import KnowledgeBaseState, WriterLockProtocol
from heta_framework.kb.parts.component_set import ComponentSet


class LoadedState:
    def __init__(self, state: KnowledgeBaseState, components: ComponentSet):
        self.state = state
        self._components = components
        #: this process holds the writer lock and is changing the state
        self.writing = False
        #: queries running now: stores they hold are not closed under them
        self.queries_in_flight = 0
        #: changes whenever the catalog is read or written (what was computed from it is then recomputed)
        self.catalog_version = 0
        self.load()

    def load(self) -> None:
        self.stamp = self.state.version()  # before reading: a commit in between is seen next time
        self.run_record = RunRecord.open(self.state)
        self.catalog: dict[str, DocumentRecord] = self.state.read_catalog()
        self.catalog_version += 1
        self.removed: dict[str, dict[str, Any]] = self.state.read_removed()

    def reload_if_changed(self, *, always: bool = False) -> bool:
        """Read the state again, and reopen the stores, when another process changed it."""
        if self.writing or (not always and self.state.version() == self.stamp):
            return False
        self.load()
        self._components.forget_stores(close=self.queries_in_flight == 0)
        return True

    def changed_elsewhere(self) -> bool:
        """Another process is writing, or has committed since this one last read."""
        return self.state.writer_active() or self.state.version() != self.stamp

    def save_catalog(self) -> None:
        self.state.write_catalog(self.catalog)
        self.catalog_version += 1

    def save_removed(self) -> None:
        self.state.write_removed(self.removed)

    @asynccontextmanager
    async def writer(self, operation: str, wait: float | None) -> AsyncIterator[WriterLockProtocol]:
        lock = await self.state.writer_lock(operation).acquire_async(wait)
        try:
            yield self._begin_write(lock)
        finally:
            self._end_write(lock)

    @contextmanager
    def writer_sync(self, operation: str, wait: float | None) -> Iterator[WriterLockProtocol]:
        lock = self.state.writer_lock(operation).acquire(wait)
        try:
            yield self._begin_write(lock)
        finally:
            self._end_write(lock)

    def _begin_write(self, lock: WriterLockProtocol) -> WriterLockProtocol:
        # a writer that waited (or was opened before another build) must start from what is on disk,
        # or it would write its stale in-memory stores over the other writer's work. Stores opened
        # while that other writer ran repaired nothing; its commit changed the stamp, so they reopen.
        self.reload_if_changed()
        self.writing = True
        return lock

    def _end_write(self, lock: WriterLockProtocol) -> None:
        self.writing = False
        self.stamp = self.state.version()
        lock.release()
