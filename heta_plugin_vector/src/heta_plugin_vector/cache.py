"""The persistent embedding cache: ``(model name, sha256(text)) -> float32 vector`` in SQLite.

A rebuild, a resumed build or a document that comes back unchanged costs no
embedding call for a text some earlier build already embedded with the same
model. Vectors are stored as raw float32 bytes (never pickle).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from heta_framework.common.sqlite import open_database

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
) WITHOUT ROWID;
"""
_CHUNK = 30000


class EmbeddingCache:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._db = open_database(path, _SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def known(self, model: str, text_hashes: Sequence[str]) -> set[str]:
        """The hashes among ``text_hashes`` that already have a vector for ``model``."""
        found: set[str] = set()
        with self._lock:
            for start in range(0, len(text_hashes), _CHUNK):
                part = list(text_hashes[start : start + _CHUNK])
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT text_hash FROM embeddings WHERE model = ? AND text_hash IN ({marks})", [model, *part]
                )
                found.update(r[0] for r in rows)
        return found

    def get_many(self, model: str, text_hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(text_hashes), _CHUNK):
                part = list(dict.fromkeys(text_hashes[start : start + _CHUNK]))
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT text_hash, vector FROM embeddings WHERE model = ? AND text_hash IN ({marks})", [model, *part]
                )
                for text_hash, blob in rows:
                    found[text_hash] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, text_hashes: Sequence[str], vectors: np.ndarray) -> None:
        """Store one batch in one transaction, so an interrupted build keeps every finished batch."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        rows = [(model, h, int(vectors.shape[1]), vectors[i].tobytes()) for i, h in enumerate(text_hashes)]
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO embeddings (model, text_hash, dimension, vector) VALUES (?, ?, ?, ?)", rows
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def dimension(self, model: str) -> int | None:
        with self._lock:
            row = self._db.execute("SELECT dimension FROM embeddings WHERE model = ? LIMIT 1", (model,)).fetchone()
        return None if row is None else int(row[0])
