"""``KnowledgeBaseStateSuite``: what every ``[stores.state]`` backend (``KnowledgeBaseState``) must do.

The catalog, removed documents and run record round-trip and persist; ``version()``
moves on every write and never on a read; caches keep bytes exactly and forget
nothing they were not told to; the writer lock is exclusive across *processes*, says
who holds it, and is free again when its holder dies.

The two cross-process tests start a real Python process that opens the same state.
It finds the backend through ``subprocess_factory``: ``"module:callable"``, called with
the knowledge-base folder (a server backend reads its connection from the environment,
which the child inherits). Leave it ``None`` and those two tests are skipped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from heta_framework.contracts.documents import DocumentRecord
from heta_framework.contracts.state import CacheProtocol, KnowledgeBaseState, WriterLockProtocol
from heta_framework.errors import KnowledgeBaseLockedError
from heta_framework.testing.conformance.base import StoreSuiteBase
from heta_framework.testing.conformance.samples import UNICODE_TEXTS

_HOLDER = textwrap.dedent(
    """
    import importlib, sys, time
    module, _, name = sys.argv[1].partition(":")
    state = getattr(importlib.import_module(module), name)(sys.argv[2])
    lock = state.writer_lock("build")
    lock.acquire()
    print("held", flush=True)
    time.sleep(600)
    """
)


def _record(document_id: str, **changes: Any) -> DocumentRecord:
    values: dict[str, Any] = {
        "id": document_id, "source": f"/docs/{document_id}.txt", "name": f"{document_id}.txt", "content_hash": "h" * 16,
        "size": 42, "raw_key": f"raw/{document_id}", "metadata": {"importance": 8, "tags": ["a", "b"]},
    }
    values.update(changes)
    return DocumentRecord(**values)


class KnowledgeBaseStateSuite(StoreSuiteBase):
    """Subclass it and provide ``store_factory``: ``root -> state``; set ``subprocess_factory`` for the process tests."""

    #: ``"module:callable"`` that a child process calls with the folder to open the same state
    subprocess_factory: str | None = None

    def test_satisfies_the_protocol(self, store):
        assert isinstance(store, KnowledgeBaseState)
        assert isinstance(store.cache("embeddings"), CacheProtocol)
        assert isinstance(store.writer_lock("build"), WriterLockProtocol)

    def test_a_new_state_is_empty(self, store):
        assert store.read_catalog() == {}
        assert store.read_removed() == {}
        assert store.read_run_record() is None
        assert not store.writer_active()
        assert store.cache("embeddings").get_many(["missing"]) == {}

    def test_catalog_round_trips_replaces_and_persists(self, store, reopen):
        records = {"a": _record("a"), "b/c": _record("b/c", state="built", modified=1.5, added=1.0, updated=2.0)}
        records[UNICODE_TEXTS["zh"]] = _record(UNICODE_TEXTS["zh"])
        store.write_catalog(records)
        assert store.read_catalog() == records
        store.write_catalog({"a": _record("a", content_hash="new")})  # a write replaces the whole catalog
        assert store.read_catalog() == {"a": _record("a", content_hash="new")}
        assert reopen(store).read_catalog() == {"a": _record("a", content_hash="new")}

    def test_run_record_and_removed_documents_round_trip(self, store, reopen):
        record = {"runs": [{"id": "r1", "status": "succeeded", "issues": [{"code": "needs_vision_model", "message": UNICODE_TEXTS["ja"] + " \u2728"}]}],
                  "steps": {"embed_chunks": {"status": "done", "stats": {"chunks": 3, "ratio": 0.5}}}, "empty": {}}
        store.write_run_record(record)
        removed = {"gone": {"source": "/docs/gone.txt", "content_hash": "abc", "removed_at": 1.0}}
        store.write_removed(removed)
        again = reopen(store)
        assert again.read_run_record() == record
        assert again.read_removed() == removed
        again.clear_run_record()
        assert again.read_run_record() is None
        assert again.read_removed() == removed  # clearing the run record leaves the rest

    def test_version_moves_on_every_write_and_never_on_a_read(self, store):
        seen = [store.version()]
        for write in (lambda: store.write_catalog({"a": _record("a")}), lambda: store.write_run_record({"runs": [1]}),
                      lambda: store.write_removed({"x": {}}), lambda: store.write_run_record({"runs": [1, 2]}),
                      store.clear_run_record):
            write()
            store.read_catalog(), store.read_run_record(), store.read_removed()
            assert store.version() == store.version()  # reads do not move it
            seen.append(store.version())
        assert len(set(seen)) == len(seen), seen  # every write did

    def test_caches_keep_bytes_exactly_and_apart(self, store, reopen):
        embeddings = store.cache("embeddings")
        values = {f"key-{i:04d}": os.urandom(i % 97) for i in range(1000)}
        values["zero"] = b"\x00" * 16
        embeddings.put_many(values)
        assert embeddings.get_many(list(values)) == values
        embeddings.put_many({"zero": b"replaced"})
        assert embeddings.get_many(["zero", "missing"]) == {"zero": b"replaced"}
        assert store.cache("llm").get_many(["zero"]) == {}  # caches are apart
        assert reopen(store).cache("embeddings").get_many(["key-0005", "zero"]) == {"key-0005": values["key-0005"], "zero": b"replaced"}

    def test_the_writer_lock_is_exclusive_and_names_its_holder(self, store, store_factory, kb_root):
        lock = store.writer_lock("build")
        with lock:
            assert lock.held and store.writer_active()
            holder = lock.holder()
            assert holder.get("operation") == "build" and str(holder.get("pid")) == str(os.getpid())
            other = store_factory(kb_root)  # another state object on the same knowledge base
            try:
                assert other.writer_active()
                with pytest.raises(KnowledgeBaseLockedError):
                    other.writer_lock("remove").acquire()
            finally:
                other.close()
        assert not lock.held and not store.writer_active()
        with store.writer_lock("delete") as again:  # free again once released
            assert again.held

    # --- across processes ----------------------------------------------------------------

    def _start_holder(self, kb_root: Path) -> subprocess.Popen:
        if self.subprocess_factory is None:
            pytest.skip("set subprocess_factory = 'module:callable' to run the cross-process lock tests")
        child = subprocess.Popen([sys.executable, "-c", _HOLDER, self.subprocess_factory, str(kb_root)],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        return child

    def test_a_lock_held_by_another_process_is_refused_with_its_pid(self, store, kb_root):
        child = self._start_holder(kb_root)
        try:
            assert store.writer_active()
            with pytest.raises(KnowledgeBaseLockedError) as refused:
                store.writer_lock("build").acquire()
            assert str(child.pid) in str(refused.value)
        finally:
            child.kill()
            child.wait()

    def test_a_dead_holder_frees_the_lock(self, store, kb_root):
        child = self._start_holder(kb_root)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        deadline = time.monotonic() + 10  # a server may take a moment to notice the lost session
        lock: Any = None
        while lock is None:
            try:
                lock = store.writer_lock("build").acquire()
            except KnowledgeBaseLockedError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        try:
            assert lock.held
        finally:
            lock.release()

