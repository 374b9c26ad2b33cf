"""``kb.sync``: blocking calls that work anywhere — scripts, threads, Jupyter, inside a running event loop.

``asyncio.run`` cannot be called from a running loop (a notebook cell, a FastAPI handler)
and makes a new loop per call, which breaks clients that pool connections per loop. So
the facade owns one background event loop thread per knowledge base: every blocking call
submits its coroutine there and waits. Calls from several threads run concurrently on
that loop; ``KnowledgeBase.close()`` stops the thread.

Use one style per knowledge base: either ``await kb.query(...)`` from your own loop, or
``kb.sync`` from any thread. Async clients inside model providers belong to the loop that
first used them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from heta_framework.errors import HetaError

if TYPE_CHECKING:
    from heta_framework.contracts.documents import DocumentRecord, SourceDocument
    from heta_framework.contracts.record import BuildReport
    from heta_framework.contracts.search import QueryResponse

T = TypeVar("T")


class BackgroundLoop:
    """An event loop running in a daemon thread, started on first use."""

    def __init__(self, name: str):
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()

    def _ensure_started(self) -> asyncio.AbstractEventLoop:
        with self._start_lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the background loop and block until it returns (or raises)."""
        loop = self._ensure_started()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coroutine.close()
            raise HetaError("kb.sync was called from code already running on its own loop; use `await kb....` there instead.")
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result()

    def stop(self) -> None:
        with self._start_lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not threading.current_thread():
            thread.join(timeout=10)
        if not loop.is_running():
            loop.close()


class AsyncKnowledgeBase(Protocol):
    """The async methods ``SyncKnowledgeBase`` gives blocking twins of (the ``KnowledgeBase`` has them)."""

    async def build(self, sources: Iterable[Path | str | SourceDocument] = (), **kwargs: Any) -> BuildReport: ...

    async def query(self, text: str, **kwargs: Any) -> QueryResponse: ...

    async def delete_documents(self, document_ids: Sequence[str], **kwargs: Any) -> list[DocumentRecord]: ...


class SyncKnowledgeBase:
    """Blocking twins of the knowledge base's async methods: ``kb.sync.query(...)``, ``kb.sync.build(...)``."""

    def __init__(self, kb: AsyncKnowledgeBase, loop: BackgroundLoop):
        self._kb = kb
        self._loop = loop

    def build(self, sources: Iterable[Path | str | SourceDocument] = (), **kwargs: Any) -> BuildReport:
        return self._loop.run(self._kb.build(sources, **kwargs))

    def query(self, text: str, **kwargs: Any) -> QueryResponse:
        return self._loop.run(self._kb.query(text, **kwargs))

    def delete_documents(self, document_ids: Sequence[str], **kwargs: Any) -> list[DocumentRecord]:
        return self._loop.run(self._kb.delete_documents(document_ids, **kwargs))

    def close(self) -> None:
        self._loop.stop()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Any other coroutine of this knowledge base, on its loop: ``kb.sync.run(kb.some_async(...))``."""
        return self._loop.run(coroutine)
