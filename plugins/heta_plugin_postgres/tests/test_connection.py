"""The shared connection: DSN from the environment, redaction, refused servers, identifiers, the shared pool."""

from __future__ import annotations

import socket

import pytest
from heta_framework.errors import RecipeError, StoreConnectionError
from heta_plugin_postgres.connection import (
    PostgresOptions,
    identifier,
    namespace_for,
    open_database,
    redact_dsn,
)

SECRET = "s3cr3t-Pa55word"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    "dsn, expected",
    [
        (f"postgresql://alice:{SECRET}@db.example.org:6543/kb", "postgresql://alice@db.example.org:6543/kb"),
        (f"host=10.0.0.5 port=5433 dbname=heta user=bob password={SECRET}", "postgresql://bob@10.0.0.5:5433/heta"),
        ("postgresql://postgres:@/postgres?host=/tmp/sock", "postgresql://postgres@[socket /tmp/sock]/postgres"),
        ("not a dsn = = =", "postgresql://<unparseable connection string>"),
    ],
)
def test_redact_dsn_keeps_where_and_drops_the_password(dsn, expected):
    assert redact_dsn(dsn) == expected
    assert SECRET not in redact_dsn(dsn)


def test_connection_refused_names_host_port_and_database_but_not_the_password(tmp_path, monkeypatch):
    port = free_port()
    monkeypatch.setenv("HETA_TEST_REFUSED_DSN", f"postgresql://heta:{SECRET}@127.0.0.1:{port}/kbdb")
    with pytest.raises(StoreConnectionError) as caught:
        open_database(PostgresOptions(dsn_env="HETA_TEST_REFUSED_DSN", connect_timeout=2), tmp_path)
    message = str(caught.value)
    assert f"127.0.0.1:{port}/kbdb" in message
    assert "HETA_TEST_REFUSED_DSN" in message and "running" in message
    assert SECRET not in message
    assert SECRET not in repr(caught.value.__cause__) and caught.value.__cause__ is None


def test_an_unset_dsn_variable_says_which_variable_to_set(tmp_path, monkeypatch):
    monkeypatch.delenv("HETA_TEST_UNSET_DSN", raising=False)
    with pytest.raises(StoreConnectionError, match="HETA_TEST_UNSET_DSN"):
        open_database(PostgresOptions(dsn_env="HETA_TEST_UNSET_DSN"), tmp_path)


@pytest.mark.parametrize("bad", ['x"; DROP TABLE t; --', "Upper", "1abc", "a-b", "a" * 64, ""])
def test_identifiers_outside_the_safe_alphabet_are_refused(bad):
    with pytest.raises(RecipeError):
        identifier(bad)


@pytest.mark.parametrize("bad", ['kb"; DROP SCHEMA public; --', "With Space", "a" * 49])
def test_namespace_option_is_validated(bad):
    with pytest.raises(ValueError):
        PostgresOptions(namespace=bad)


def test_default_namespace_comes_from_the_folder_name(tmp_path):
    assert namespace_for(tmp_path / "My KB-2026") == "heta_my_kb_2026"
    long_a, long_b = namespace_for(tmp_path / ("x" * 80 + "a")), namespace_for(tmp_path / ("x" * 80 + "b"))
    assert len(long_a) <= 48 and long_a != long_b
    identifier(long_a)


def test_open_database_creates_the_schema_on_the_real_server(postgres_dsn, monkeypatch, tmp_path):
    # the tests' server trusts local connections, so a password in the DSN is accepted and ignored:
    # enough to check it never shows in what the plugin says about the database
    dsn = postgres_dsn.replace("postgres:@", f"postgres:{SECRET}@")
    monkeypatch.setenv("HETA_POSTGRES_DSN", dsn)
    kb_root = tmp_path / "conn_kb"
    database = open_database(PostgresOptions(), kb_root)
    assert database.schema == "heta_conn_kb"
    with database.connection() as conn:
        found = conn.execute(
            "SELECT count(*) FROM information_schema.schemata WHERE schema_name = %s", (database.schema,)
        ).fetchone()
    assert found == (1,)
    assert SECRET not in repr(database) and SECRET not in database.where
    # a second open in the process reuses the pool of the same DSN
    assert open_database(PostgresOptions(), kb_root).pool is database.pool
