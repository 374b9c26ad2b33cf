"""The postgres chunk store and text index pass core's SQL-store and text-index suites on a real server."""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import SQLStoreSuite, TextIndexStoreSuite
from heta_plugin_postgres.sql_store import PostgresSQLStore, PostgresSQLStoreConfig
from heta_plugin_postgres.text_store import PostgresTextIndex, PostgresTextIndexConfig


class TestPostgresSQLStore(SQLStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self, postgres_namespace):
        return lambda root: PostgresSQLStore.open(PostgresSQLStoreConfig(namespace=postgres_namespace), root)


class TestPostgresSQLStoreEnglish(SQLStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self, postgres_namespace):
        config = PostgresSQLStoreConfig(namespace=postgres_namespace, language="english")
        return lambda root: PostgresSQLStore.open(config, root)


class TestPostgresTextIndex(TextIndexStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self, postgres_namespace):
        return lambda root: PostgresTextIndex.open(PostgresTextIndexConfig(namespace=postgres_namespace), root)
