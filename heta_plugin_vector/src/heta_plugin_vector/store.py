"""``stores.vector`` of type ``faiss``: named FAISS collections inside the knowledge-base folder."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from heta_framework.errors import KnowledgeBaseError

from heta_plugin_vector.collection import FaissCollection
from heta_plugin_vector.config import FaissStoreConfig

_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def _check_name(name: str) -> str:
    if not _COLLECTION_NAME.match(name) or ".." in name:
        raise KnowledgeBaseError(f"Invalid vector collection name {name!r}: use letters, digits, '_', '-' and '.' (for example 'chunks').")
    return name


class FaissVectorStore:
    """Satisfies ``VectorStoreProtocol``. Collections live in ``<kb>/<path>/<collection>/``."""

    def __init__(self, root: Path, config: FaissStoreConfig, kb_root: Path):
        self.root = root
        self.config = config
        self._kb_root = kb_root
        self._collections: dict[str, FaissCollection] = {}
        self._lock = threading.Lock()

    @classmethod
    def open(cls, config: FaissStoreConfig | None, kb_root: Path) -> FaissVectorStore:
        config = config or FaissStoreConfig()
        return cls(kb_root / config.path, config, kb_root)

    def collection(self, name: str, dimension: int | None = None) -> FaissCollection:
        """Open (or, with ``dimension``, create) a collection; a dimension mismatch is an error."""
        _check_name(name)
        with self._lock:
            existing = self._collections.get(name)
            if existing is not None:
                if dimension is not None and int(dimension) != existing.dimension:
                    # let the constructor raise its explanatory message
                    FaissCollection(existing.folder, name, self.config, dimension, kb_root=self._kb_root)
                return existing
            opened = FaissCollection(self.root / name, name, self.config, dimension, kb_root=self._kb_root)
            self._collections[name] = opened
            return opened

    def has_collection(self, name: str) -> bool:
        _check_name(name)
        return name in self._collections or (self.root / name / "collection.json").exists()

    def drop_collection(self, name: str) -> None:
        _check_name(name)
        with self._lock:
            opened = self._collections.pop(name, None)
            if opened is None and (self.root / name).exists():
                opened = FaissCollection(self.root / name, name, self.config, kb_root=self._kb_root)
            if opened is not None:
                opened.destroy()

    def release_collection(self, name: str) -> None:
        """Write ``name`` and forget it: its index leaves memory once nobody holds it (``VectorStoreProtocol``)."""
        _check_name(name)
        with self._lock:
            opened = self._collections.pop(name, None)
        if opened is not None:
            opened.flush()  # not closed: a search that already holds it still works

    def relative_paths(self, name: str) -> list[str]:
        return [(self.root / _check_name(name)).relative_to(self._kb_root).as_posix()]

    def flush(self) -> None:
        for collection in list(self._collections.values()):
            collection.flush()

    def close(self) -> None:
        with self._lock:
            for collection in self._collections.values():
                collection.close()
            self._collections.clear()
