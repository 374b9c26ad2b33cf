"""The public import path of ``heta_framework.runtime.compact`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.runtime.compact import (
    SQLITE_SUFFIXES,
    CompactReport,
    compact_knowledge_base,
    compact_sqlite_file,
    folder_size,
    sqlite_files,
)

__all__ = ["CompactReport", "SQLITE_SUFFIXES", "compact_knowledge_base", "compact_sqlite_file", "folder_size", "sqlite_files"]
