"""The public import path of ``heta_framework.contracts.search`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.search import (
    Citation,
    QueryContext,
    QueryEngineProtocol,
    QueryRequest,
    QueryResponse,
    QueryResult,
    SearchAsset,
    SearchAssetRef,
    TraceNode,
    chunk_result,
    elapsed_ms,
    query_issue,
    required_components,
)
from heta_framework.plugins.query_engines import QueryEngineRegistry, check_available

__all__ = [
    "Citation",
    "QueryContext",
    "QueryEngineProtocol",
    "QueryEngineRegistry",
    "QueryRequest",
    "QueryResponse",
    "QueryResult",
    "SearchAsset",
    "SearchAssetRef",
    "TraceNode",
    "check_available",
    "chunk_result",
    "elapsed_ms",
    "query_issue",
    "required_components",
]
