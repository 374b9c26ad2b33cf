"""The public import path of ``heta_framework.contracts.text_index`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.text_index import TextIndexStore

__all__ = ["TextIndexStore"]
