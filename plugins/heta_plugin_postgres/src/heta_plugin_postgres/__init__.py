"""heta-plugin-postgres: every store slot, and the knowledge base's state, on PostgreSQL + pgvector.

Installed, it registers through the ``heta`` entry point (hook implementations in
``heta_plugin_postgres.plugin``); in tests, ``make_registry(heta_plugin_postgres)``.
The connection comes from an environment variable (``dsn_env``, default
``HETA_POSTGRES_DSN``) and its password never reaches records, traces, logs or errors.
"""

from __future__ import annotations

from heta_plugin_postgres.connection import (
    DEFAULT_DSN_ENV,
    PostgresDatabase,
    PostgresOptions,
    open_database,
    redact_dsn,
)
from heta_plugin_postgres.plugin import register_stores

__all__ = [
    "DEFAULT_DSN_ENV",
    "PostgresDatabase",
    "PostgresOptions",
    "open_database",
    "redact_dsn",
    "register_stores",
]
