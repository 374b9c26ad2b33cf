"""The public import path of ``heta_framework.contracts.query_options`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.query_options import (
    COMMON_OPTIONS,
    CommonQueryOptions,
    NoOptions,
    accepted_options,
    check_options,
    option_names,
    options_type_of,
    parse_options,
    query_options,
)

__all__ = [
    "COMMON_OPTIONS",
    "CommonQueryOptions",
    "NoOptions",
    "accepted_options",
    "check_options",
    "option_names",
    "options_type_of",
    "parse_options",
    "query_options",
]
