"""One real PostgreSQL server for this distribution's tests, started once and stopped at the end."""

from heta_plugin_postgres.testing import postgres_dsn, postgres_env, postgres_namespace  # noqa: F401
