"""``sql_text_search``: keyword search over chunk text in SQLite FTS5 (BM25), with metadata filters."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from heta_framework.common.tracing import store_span
from heta_framework.contracts.query_options import NoOptions
from heta_framework.contracts.search import QueryContext, QueryRequest, QueryResponse, SearchAssetRef, chunk_result, query_issue
from heta_framework.contracts.stores import SQLStore


class SqlTextSearchEngine:
    mode: ClassVar[str] = "sql_text_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({SearchAssetRef(kind="chunk_text_index")})
    options_type: ClassVar[type] = NoOptions  # any option given is an error, not silently ignored

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        asset = context.find_asset(SearchAssetRef(kind="chunk_text_index"))
        key = asset.store if asset else "stores.sql"
        store: SQLStore = context.get_component(key)
        with store_span("sql.search_text", key, {"heta.query.top_k": request.top_k}):
            hits = await asyncio.to_thread(store.search_text, request.text, request.top_k, request.filters)
        results = [chunk_result(chunk, score, self.mode) for chunk, score in hits]
        analyzer = getattr(store, "analyzer", None)
        metadata = {"analyzer": analyzer} if analyzer else {}
        # a store without query_terms (another backend) cannot say why nothing matched, so no issue is claimed
        terms = getattr(store, "query_terms", None)
        if not hits and request.text.strip() and terms is not None and not terms(request.text):
            metadata["issues"] = [
                query_issue(
                    "no_query_words",
                    f"The query has no words the {analyzer!r} SQL text analyzer indexes (only stop words, punctuation or symbols).",
                    "returned_no_results",
                )
            ]
        return QueryResponse(results=results, metadata=metadata)
