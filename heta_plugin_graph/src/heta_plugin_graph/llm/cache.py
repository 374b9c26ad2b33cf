"""A persistent cache of language-model answers, in SQLite inside the knowledge-base folder.

Keys combine the model name, the prompt version and a hash of what the prompt
is about (a chunk's text, a dedup group), so a resumed or repeated build asks
the model nothing it already answered, while a new prompt version or another
model asks again. Answers that stayed invalid after every try are cached too:
at temperature 0 asking again gives the same answer and costs the same.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import attrs
from heta_framework.common.sqlite import open_database
from heta_framework.kb.documents import content_hash

CACHE_FILE = "graph_llm_cache.sqlite"


@attrs.frozen
class CachedAnswer:
    status: str  # "valid" or "invalid"
    value: Any = None
    error: str = ""
    attempts: int = 1


def cache_key(model_name: str, prompt_version: str, kind: str, subject_text: str) -> str:
    return content_hash("\x1f".join((model_name, prompt_version, kind, content_hash(subject_text))))


class LlmCache:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._db = open_database(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, status TEXT NOT NULL, value TEXT,"
            " error TEXT NOT NULL, attempts INTEGER NOT NULL, created REAL NOT NULL)"
        )

    @classmethod
    def in_folder(cls, root: Path) -> LlmCache:
        return cls(root / CACHE_FILE)

    def get(self, key: str) -> CachedAnswer | None:
        with self._lock:
            row = self._db.execute("SELECT status, value, error, attempts FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return CachedAnswer(row[0], json.loads(row[1]) if row[1] is not None else None, row[2], row[3])

    def put(self, key: str, answer: CachedAnswer) -> None:
        # each answer commits on its own so an interrupted build keeps everything answered so far
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answers (key, status, value, error, attempts, created) VALUES (?, ?, ?, ?, ?, ?)",
                (key, answer.status, json.dumps(answer.value, ensure_ascii=False) if answer.value is not None else None,
                 answer.error, answer.attempts, time.time()),
            )

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()
