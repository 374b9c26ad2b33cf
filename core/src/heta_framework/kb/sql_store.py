"""The public import path of ``heta_framework.contracts.sql_store`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.sql_store import SQLStore

__all__ = ["SQLStore"]
