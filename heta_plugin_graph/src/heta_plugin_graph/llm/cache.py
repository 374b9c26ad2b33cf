"""A persistent cache of language-model answers: the knowledge base's ``graph_llm`` cache, or a SQLite file.

Graph steps use ``StateLlmCache`` over the knowledge base's state (the folder's
``graph_llm/cache.sqlite``, or a table on the server the recipe's ``[stores.state]``
names); ``LlmCache`` is the same cache in a SQLite file of its own, for callers with
no knowledge base.

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
from heta_framework.kb.state import CacheProtocol

CACHE_FILE = "graph_llm_cache.sqlite"
#: the knowledge-base state's cache the graph steps keep their answers in
STATE_CACHE_NAME = "graph_llm"


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


class StateLlmCache:
    """``LlmCache``'s ``get``/``put`` over a ``CacheProtocol`` (JSON values); the state owns the connection."""

    def __init__(self, cache: CacheProtocol):
        self._cache = cache

    def get(self, key: str) -> CachedAnswer | None:
        raw = self._cache.get_many([key]).get(key)
        if raw is None:
            return None
        data = json.loads(raw)
        return CachedAnswer(data["status"], data.get("value"), data.get("error", ""), int(data.get("attempts", 1)))

    def put(self, key: str, answer: CachedAnswer) -> None:
        # each answer commits on its own so an interrupted build keeps everything answered so far
        self._cache.put_many({key: json.dumps(attrs.asdict(answer), ensure_ascii=False).encode("utf-8")})

    def close(self) -> None:
        pass
