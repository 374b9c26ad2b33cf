"""The connection every postgres store shares: DSN from the environment, one pool per DSN, safe identifiers.

A recipe never holds the DSN itself: ``dsn_env`` names the environment variable
that does (default ``HETA_POSTGRES_DSN``), so the password stays out of recipe
files and recipe summaries. Anything this plugin says about the server goes
through :func:`redact_dsn` (host, port, database and user; never the password).

Each knowledge base lives in its own schema (``namespace``, default derived from
the knowledge-base folder's name), so one database holds many knowledge bases and
every table name is fixed code, not user input. Identifiers are validated and then
quoted with ``psycopg.sql.Identifier``; values always travel as parameters.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import psycopg
import psycopg.conninfo
from heta_framework.common.validators import positive_whole_number
from heta_framework.errors import RecipeError, StoreConnectionError
from psycopg import sql
from psycopg_pool import ConnectionPool, PoolTimeout

DEFAULT_DSN_ENV = "HETA_POSTGRES_DSN"
#: PostgreSQL truncates identifiers at 63 bytes
MAX_IDENTIFIER_LENGTH = 63
#: a namespace leaves room for the suffixes of names derived from it
MAX_NAMESPACE_LENGTH = 48
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _env_name(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        raise ValueError(f"dsn_env must be an environment variable name (letters, digits, _), got {value!r}")


def _namespace(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if value:
        if not _IDENTIFIER.match(value):
            raise ValueError(f"namespace must be lower-case letters, digits and _, starting with a letter or _, "
                             f"got {value!r}")
        if len(value) > MAX_NAMESPACE_LENGTH:
            raise ValueError(f"namespace must be at most {MAX_NAMESPACE_LENGTH} characters, got {len(value)}")


@attrs.frozen
class PostgresOptions:
    """Options every postgres store type takes (each store's config extends it).

    ``dsn_env``: the environment variable holding the connection string (a
    ``postgresql://`` URI or ``key=value`` conninfo). ``namespace``: the schema that
    holds this knowledge base's tables; empty (default) means ``heta_`` + the
    knowledge-base folder's name, lower-cased, non-alphanumerics as ``_``.
    Give every store slot of one knowledge base the same ``namespace``.
    ``pool_max_size``: connections this process keeps open to the server.
    ``connect_timeout``: seconds to wait for the server before giving up.
    """

    dsn_env: str = attrs.field(default=DEFAULT_DSN_ENV, validator=_env_name)
    namespace: str = attrs.field(default="", validator=_namespace)
    pool_max_size: int = attrs.field(default=8, validator=positive_whole_number)
    connect_timeout: int = attrs.field(default=10, validator=positive_whole_number)


def validate_identifier(name: str, *, what: str = "identifier") -> str:
    """``name`` if it is a safe lower-case SQL identifier, else a ``RecipeError`` saying what is allowed."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name) or len(name) > MAX_IDENTIFIER_LENGTH:
        raise RecipeError(
            f"{what} {name!r} is not a usable PostgreSQL name: use lower-case letters, digits and _, "
            f"starting with a letter or _, at most {MAX_IDENTIFIER_LENGTH} characters"
        )
    return name


def identifier(name: str) -> sql.Identifier:
    """A validated name, quoted for composition into a statement."""
    return sql.Identifier(validate_identifier(name))


def namespace_for(root: Path) -> str:
    """The default schema of the knowledge base in ``root``: ``heta_<folder name>``, made a safe identifier."""
    slug = re.sub(r"[^a-z0-9_]+", "_", Path(root).name.lower()).strip("_") or "kb"
    name = f"heta_{slug}"
    if len(name) > MAX_NAMESPACE_LENGTH:
        # keep names distinct when truncating: a short hash of the full folder name
        digest = hashlib.sha256(Path(root).name.encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAMESPACE_LENGTH - 9]}_{digest}"
    return name


def dsn_from_environment(dsn_env: str) -> str:
    dsn = os.environ.get(dsn_env, "").strip()
    if not dsn:
        raise StoreConnectionError(
            f"The postgres store reads its connection string from the environment variable {dsn_env}, "
            f"which is not set. Set it (for example {dsn_env}=postgresql://user:password@host:5432/dbname) "
            f"or point dsn_env in the recipe's [stores.*] section at the variable that holds it."
        )
    return dsn


def redact_dsn(dsn: str) -> str:
    """The DSN as ``postgresql://user@host:port/dbname``: what to name in messages, with no password."""
    try:
        parts = psycopg.conninfo.conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "postgresql://<unparseable connection string>"
    user = parts.get("user") or ""
    host = parts.get("host") or parts.get("hostaddr") or "localhost"
    port = parts.get("port") or "5432"
    dbname = parts.get("dbname") or user or "postgres"
    where = f"{host}:{port}" if not str(host).startswith("/") else f"[socket {host}]"
    return f"postgresql://{user + '@' if user else ''}{where}/{dbname}"


def _password(dsn: str) -> str:
    try:
        return str(psycopg.conninfo.conninfo_to_dict(dsn).get("password") or "")
    except psycopg.ProgrammingError:
        return ""


def scrub(text: str, dsn: str) -> str:
    """``text`` with the DSN and its password taken out (driver messages sometimes echo what they were given)."""
    password = _password(dsn)
    text = text.replace(dsn, redact_dsn(dsn))
    return text.replace(password, "***") if password else text


class PostgresDatabase:
    """One knowledge base's view of the server: the shared pool, its schema, error translation.

    ``connection()`` lends a pooled connection inside a transaction (committed when
    the block ends without error); a lost or refused server becomes a
    ``StoreConnectionError`` naming the redacted DSN.
    """

    def __init__(self, dsn: str, schema: str, options: PostgresOptions):
        self._dsn = dsn
        self.schema = validate_identifier(schema, what="namespace")
        self.options = options
        self.where = redact_dsn(dsn)

    def __repr__(self) -> str:
        return f"PostgresDatabase({self.where!r}, schema={self.schema!r})"

    @property
    def pool(self) -> ConnectionPool:
        return _shared_pool(self._dsn, self.options)

    def table(self, name: str) -> sql.Composed:
        """``"schema"."name"``, both validated and quoted."""
        return sql.SQL("{}.{}").format(identifier(self.schema), identifier(name))

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        try:
            with self.pool.connection() as conn:
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise self.unavailable(exc) from None

    def unavailable(self, exc: BaseException) -> StoreConnectionError:
        reason = scrub(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__, self._dsn)
        return StoreConnectionError(
            f"PostgreSQL at {self.where} is not reachable ({reason}). "
            f"Check that the server is running and accepts connections, and that the environment variable "
            f"{self.options.dsn_env} holds the right host, port, database and credentials; then run again "
            f"(a build resumes where it stopped)."
        )

    def ensure_schema(self) -> None:
        with self.connection() as conn:
            # CREATE SCHEMA IF NOT EXISTS races between processes: serialise it on a transaction lock
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"heta-schema:{self.schema}",))
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(identifier(self.schema)))

    def ensure_vector_extension(self) -> None:
        with self.connection() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(hashtext('heta-extension-vector'))")
            installed = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone()
            if installed:
                return
            available = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
            if not available:
                raise StoreConnectionError(
                    f"PostgreSQL at {self.where} has no pgvector extension. Install pgvector on the server "
                    f"(https://github.com/pgvector/pgvector#installation) and run again."
                )
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.errors.InsufficientPrivilege:
                raise StoreConnectionError(
                    f"The user of {self.where} may not create the pgvector extension. Ask the database owner "
                    f"to run CREATE EXTENSION vector; in that database once, then run again."
                ) from None


def open_database(options: PostgresOptions, root: Path) -> PostgresDatabase:
    """The database of the knowledge base in ``root``: checks the server answers and creates its schema."""
    dsn = dsn_from_environment(options.dsn_env)
    database = PostgresDatabase(dsn, options.namespace or namespace_for(root), options)
    database.ensure_schema()
    return database


_pools: dict[tuple[int, str], ConnectionPool] = {}
_pools_lock = threading.Lock()


def _shared_pool(dsn: str, options: PostgresOptions) -> ConnectionPool:
    # keyed by process id too: a forked child must not use its parent's sockets and pool threads
    key = (os.getpid(), dsn)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            _probe(dsn, options)
            pool = ConnectionPool(
                conninfo=dsn,
                min_size=1,
                max_size=max(1, options.pool_max_size),
                kwargs={"connect_timeout": options.connect_timeout},
                # a server restarted under us leaves dead sockets in the pool: check before lending
                check=ConnectionPool.check_connection,
                timeout=float(options.connect_timeout),
                open=False,
                name=f"heta-postgres-{len(_pools)}",
            )
            pool.open(wait=False)
            _pools[key] = pool
        return pool


def _probe(dsn: str, options: PostgresOptions) -> None:
    """Connect once, directly: the pool would only time out, the driver says why (refused, auth, no database)."""
    try:
        psycopg.connect(dsn, connect_timeout=options.connect_timeout).close()
    except psycopg.OperationalError as exc:
        raise PostgresDatabase(dsn, "public", options).unavailable(exc) from None


def close_pools() -> None:
    """Close every pool this process opened (at exit, and in tests that stop the server)."""
    with _pools_lock:
        pools = [pool for (pid, _), pool in _pools.items() if pid == os.getpid()]
        _pools.clear()
    for pool in pools:
        pool.close()


atexit.register(close_pools)
