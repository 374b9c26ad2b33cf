"""``stores.objects``: a plain folder of keyed objects inside the knowledge base."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from heta_framework.common.atomic import write_bytes_atomic


@attrs.frozen
class FolderStoreConfig:
    path: str = "objects"


class FolderObjectStore:
    def __init__(self, root: Path):
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)
        self._root = str(root)
        self._unsynced = False

    @classmethod
    def open(cls, config: FolderStoreConfig | None, kb_root: Path) -> FolderObjectStore:
        return cls(kb_root / (config or FolderStoreConfig()).path)

    def _location(self, key: str) -> str:
        # plain strings: steps read every document's chunk file, and building a Path per key was a sixth of
        # persist_chunks' time at 10k chunks
        if key.startswith("/") or ".." in key.split("/"):
            raise ValueError(f"object key must be a relative path without '..', got {key!r}")
        return os.path.join(self._root, key)

    def _path(self, key: str) -> Path:
        return Path(self._location(key))

    def put_bytes(self, key: str, data: bytes) -> None:
        write_bytes_atomic(self._path(key), data, durable=False)
        self._unsynced = True

    def flush(self) -> None:
        """Make every object written since the last flush durable (called after each step)."""
        if self._unsynced:
            os.sync()
            self._unsynced = False

    def get_bytes(self, key: str) -> bytes:
        with open(self._location(key), "rb") as file:
            return file.read()

    def put_json(self, key: str, value: Any) -> None:
        self.put_bytes(key, json.dumps(value, ensure_ascii=False).encode("utf-8"))

    def get_json(self, key: str) -> Any:
        return json.loads(self.get_bytes(key))

    def exists(self, key: str) -> bool:
        return self._path(key).exists()

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def keys(self, prefix: str = "") -> Iterator[str]:
        base = self._path(prefix) if prefix else self.root
        if base.is_file():
            yield prefix
            return
        if not base.exists():
            return
        for path in sorted(base.rglob("*")):
            if path.is_file() and not path.name.startswith("."):
                yield path.relative_to(self.root).as_posix()
