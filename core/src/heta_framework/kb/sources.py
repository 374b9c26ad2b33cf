"""The public import path of ``heta_framework.runtime.sources`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.runtime.sources import (
    SkippedSource,
    SourceItem,
    SourceWalk,
    check_given_documents,
    file_document_id,
    raw_suffix,
)

__all__ = ["SkippedSource", "SourceItem", "SourceWalk", "check_given_documents", "file_document_id", "raw_suffix"]
