"""How every Heta SQLite file is opened: one connection, WAL, explicit transactions.

Autocommit mode (``isolation_level=None``) plus ``BEGIN``/``COMMIT`` written by
the caller keeps each logical change in one transaction; WAL lets readers go on
while a build writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def open_database(path: Path, schema: str = "") -> sqlite3.Connection:
    """Open (creating folders and ``schema`` as needed) a database shared across threads behind a lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    if schema:
        db.executescript(schema)
    return db


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN`` ... ``COMMIT``, or ``ROLLBACK`` on any error (KeyboardInterrupt included)."""
    db.execute("BEGIN")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def json_key_in(column: str, key: str, values: list) -> tuple[str, list]:
    """A condition "the JSON object in ``column`` has ``key`` with one of ``values``", and its parameters.

    A plain key becomes a ``json_extract`` path (fast). SQLite cannot address a
    key holding a quote, backslash or control character with a path, so such a key
    is matched through ``json_each`` instead. Either way the key is a parameter.
    """
    marks = ",".join("?" * len(values))
    if any(ch in key for ch in '"\\') or any(ord(ch) < 0x20 for ch in key):
        return f"EXISTS (SELECT 1 FROM json_each({column}) WHERE json_each.key = ? AND json_each.value IN ({marks}))", [key, *values]
    return f"json_extract({column}, ?) IN ({marks})", ['$."' + key + '"', *values]
