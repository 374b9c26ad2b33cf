"""Core build steps: ParseDocuments, SplitDocuments, PersistChunks."""

from heta_framework.builtin.steps.parse import ParseDocuments
from heta_framework.builtin.steps.persist import PersistChunks
from heta_framework.builtin.steps.split import SplitDocuments

__all__ = ["ParseDocuments", "PersistChunks", "SplitDocuments"]
