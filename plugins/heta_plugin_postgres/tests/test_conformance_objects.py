"""The postgres object store passes core's object-store suite on a real server."""

from __future__ import annotations

import pytest
from heta_framework.testing.conformance import ObjectStoreSuite
from heta_plugin_postgres.connection import PostgresOptions
from heta_plugin_postgres.object_store import PostgresObjectStore


class TestPostgresObjects(ObjectStoreSuite):
    server_backed = True

    @pytest.fixture
    def store_factory(self, postgres_namespace):
        return lambda root: PostgresObjectStore.open(PostgresOptions(namespace=postgres_namespace), root)
