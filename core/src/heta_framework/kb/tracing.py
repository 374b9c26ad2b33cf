"""The public import path of ``heta_framework.common.tracing``: spans for plugins' own store and service calls
(``with store_span("vector.search", "stores.vector"): ...``), under the query's or build's span."""

from heta_framework.common.tracing import (
    QUERY_TEXT_ENV,
    continued_from,
    query_text_attributes,
    query_text_enabled,
    set_attributes,
    span,
    store_span,
    trace_headers,
)

__all__ = [
    "QUERY_TEXT_ENV", "continued_from", "query_text_attributes", "query_text_enabled", "set_attributes", "span", "store_span", "trace_headers",
]
