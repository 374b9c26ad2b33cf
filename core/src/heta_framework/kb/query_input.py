"""The public import path of ``heta_framework.contracts.query_input`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.query_input import check_filters, check_text, check_top_k, matches_filters

__all__ = ["check_filters", "check_text", "check_top_k", "matches_filters"]
