"""The SQLite graph store passes core's graph-store conformance suite."""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import GraphStoreSuite

from heta_plugin_graph import SQLiteGraphStore


class TestSQLiteGraph(GraphStoreSuite):
    @pytest.fixture
    def store_factory(self):
        return lambda root: SQLiteGraphStore.open(None, root)
