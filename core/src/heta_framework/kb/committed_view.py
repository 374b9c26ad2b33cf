"""The public import path of ``heta_framework.runtime.committed_view`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.runtime.committed_view import HIDDEN_CODE, documents_being_built, hide_documents

__all__ = ["HIDDEN_CODE", "documents_being_built", "hide_documents"]
