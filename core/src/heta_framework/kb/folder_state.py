"""The public import path of ``heta_framework.builtin.stores.folder_state`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.builtin.stores.folder_state import (
    CACHE_FILE,
    CATALOG_FILE,
    RECORD_FILE,
    REMOVED_FILE,
    FolderState,
    SQLiteCache,
)

__all__ = ["CACHE_FILE", "CATALOG_FILE", "FolderState", "RECORD_FILE", "REMOVED_FILE", "SQLiteCache"]
