"""PostgresState passes core's knowledge-base state suite on a real server, the cross-process lock tests included."""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import KnowledgeBaseStateSuite
from heta_plugin_postgres.connection import namespace_for
from heta_plugin_postgres.state import PostgresState
from heta_plugin_postgres.testing import drop_schema


class TestPostgresState(KnowledgeBaseStateSuite):
    server_backed = True
    # the child reads the DSN from the inherited environment and derives the same schema from the folder's name
    subprocess_factory = "heta_plugin_postgres.testing:default_state"

    @pytest.fixture
    def kb_root(self, tmp_path, postgres_namespace):
        return tmp_path / postgres_namespace  # a fresh name per test: a fresh schema per test

    @pytest.fixture
    def store_factory(self, postgres_env, kb_root):
        yield lambda root: PostgresState.open(None, root)
        drop_schema(postgres_env, namespace_for(kb_root))
