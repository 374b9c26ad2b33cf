"""Core's own backends pass their conformance suites: SQLite chunks (stores.sql), the folder (stores.objects) and the
folder's knowledge-base state (stores.state)."""

from __future__ import annotations

from pathlib import Path

import pytest
from heta_framework.builtin.stores.folder import FolderObjectStore
from heta_framework.builtin.stores.sqlite_chunks import SQLiteChunkStore
from heta_framework.kb.folder_state import FolderState
from heta_framework.testing.conformance import KnowledgeBaseStateSuite, ObjectStoreSuite, SQLStoreSuite


class TestSQLiteChunks(SQLStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return lambda root: SQLiteChunkStore.open(None, root)


class TestFolderObjects(ObjectStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return lambda root: FolderObjectStore.open(None, root)


def test_the_folder_writer_lock_satisfies_the_state_contract(tmp_path):
    from heta_framework.kb.lock import WriterLock
    from heta_framework.kb.state import WriterLockProtocol

    lock = WriterLock(tmp_path, "build")
    assert isinstance(lock, WriterLockProtocol)
    with lock.acquire():
        assert lock.held and lock.holder()["operation"] == "build"
    assert not lock.held


def open_folder_state(root: str) -> FolderState:
    """What the cross-process tests' child calls (``subprocess_factory``): the folder state of ``root``."""
    Path(root).mkdir(parents=True, exist_ok=True)
    return FolderState(Path(root))


class TestFolderState(KnowledgeBaseStateSuite):
    subprocess_factory = "heta_framework.kb.folder_state:FolderState"

    @pytest.fixture
    def store_factory(self):
        return open_folder_state
