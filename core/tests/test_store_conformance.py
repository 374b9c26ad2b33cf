"""Core's own backends pass their conformance suites: SQLite chunks (stores.sql) and the folder (stores.objects)."""

from __future__ import annotations

import pytest
from heta_framework.builtin.stores.folder import FolderObjectStore
from heta_framework.builtin.stores.sqlite_chunks import SQLiteChunkStore
from heta_framework.testing.conformance import ObjectStoreSuite, SQLStoreSuite


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
