"""The public import path of ``heta_framework.contracts.query_memo`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.query_memo import QueryMemo

__all__ = ["QueryMemo"]
