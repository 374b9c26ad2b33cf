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
