"""``full_text_search``: BM25 keyword search over chunk text, with metadata filters.

Any text is a valid query: it is tokenized with the index's own analyzer and
the terms are ORed, so quotes, colons, ``AND(`` or ``*`` are just characters
and never query syntax.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Mapping
from typing import Any, ClassVar

from heta_framework.errors import KnowledgeBaseError
from heta_framework.kb.query_options import NoOptions
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, SearchAssetRef, chunk_result, query_issue
from heta_framework.kb.tracing import store_span

from heta_plugin_fulltext.protocol import TextIndexStore
from heta_plugin_fulltext.step import ASSET_KIND, ASSET_STORE

FULL_TEXT_ASSET = SearchAssetRef(kind=ASSET_KIND)


class FullTextSearchEngine:
    mode: ClassVar[str] = "full_text_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({FULL_TEXT_ASSET})
    options_type: ClassVar[type] = NoOptions  # any option given is an error, not silently ignored

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        asset = context.find_asset(FULL_TEXT_ASSET)
        store: TextIndexStore = context.get_component(asset.store if asset else ASSET_STORE)
        if asset is not None:
            check_built_with(asset.metadata, store)
        with store_span("text.search", asset.store if asset else ASSET_STORE, {"heta.store.backend": store.backend,
                                                                                "heta.query.top_k": request.top_k}):
            hits = await _search(store, request)
        results = [chunk_result(chunk, score, self.mode) for chunk, score in hits]
        metadata: dict[str, Any] = {"backend": store.backend, "analyzer": store.analyzer}
        if not hits and not store.terms(request.text):
            metadata["issues"] = [
                query_issue(
                    "no_query_words",
                    f"The query has no words the {store.analyzer!r} analyzer indexes (only stop words, punctuation or symbols).",
                    "returned_no_results",
                )
            ]
        return QueryResponse(results=results, metadata=metadata)


#: per store and event loop, the gate of a store that limits its concurrent searches (``concurrent_searches``);
#: weak on both, so a closed store or a finished loop takes its gate with it
_gates: weakref.WeakKeyDictionary[Any, weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


async def _search(store: TextIndexStore, request: QueryRequest) -> list[tuple[Any, float]]:
    """Run the store's search where it runs best (TextIndexStore's optional attributes)."""
    if getattr(store, "searches_in_place", False):  # a thread hop would cost more than the search
        return store.search(request.text, request.top_k, request.filters)
    limit = getattr(store, "concurrent_searches", None)
    if limit is None:
        return await asyncio.to_thread(store.search, request.text, request.top_k, request.filters)
    # searches beyond the limit wait here, on the event loop, not in worker threads fighting over the GIL
    by_loop = _gates.setdefault(store, weakref.WeakKeyDictionary())
    loop = asyncio.get_running_loop()
    gate = by_loop.get(loop)
    if gate is None:
        gate = by_loop[loop] = asyncio.Semaphore(limit)
    async with gate:
        return await asyncio.to_thread(store.search, request.text, request.top_k, request.filters)


def check_built_with(recorded: Mapping[str, Any], store: TextIndexStore) -> None:
    """The store must read the index the way it was built: same backend, same analyzer."""
    for key, current in (("backend", store.backend), ("analyzer", store.analyzer)):
        built = recorded.get(key)
        if built and built != current:
            raise KnowledgeBaseError(
                f"The full-text index was built with {key} {built!r}, but stores.text now uses {current!r}. "
                f"Set it back to {built!r} in the recipe ([stores.text]), or delete the knowledge base's derived "
                "data (`heta delete`) and build it again."
            )
