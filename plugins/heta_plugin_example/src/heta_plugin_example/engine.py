"""``title_search``: match the words of a query against document titles and headings."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import attrs
from heta_framework.kb.documents import chunk_from_dict
from heta_framework.kb.query_options import NoOptions
from heta_framework.kb.search import (
    QueryContext,
    QueryRequest,
    QueryResponse,
    QueryResult,
    SearchAssetRef,
    chunk_result,
    query_issue,
)

from heta_plugin_example.step import INDEX_PREFIX
from heta_plugin_example.titles import entry_words, matches_filters, query_words, score

#: any asset of this kind will do; ``SearchAssetRef("title_index", "titles")`` would insist on the name
TITLE_INDEX = SearchAssetRef(kind="title_index")


def _load_entries(objects: Any, prefix: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    for key in objects.keys(prefix):
        entries.extend(objects.get_json(key)["entries"])
    return entries


class TitleSearchEngine:
    """Find the documents and sections whose title or heading shares the most words with the query.

    Each hit is the chunk the title or heading points to, with the chunk's
    provenance plus ``title`` (the document's), ``matched_kind``
    (``title``/``heading``), ``matched_text`` and ``matched_words``. A heading
    also answers to its document's title words. ``filters`` match chunk
    metadata exactly.
    """

    mode: ClassVar[str] = "title_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({TITLE_INDEX})
    #: the attrs class of this mode's options; ``NoOptions``: it has none, and any option given is an error
    options_type: ClassVar[type] = NoOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        wanted = query_words(request.text)
        if not wanted:
            issue = query_issue("no_query_words", "The query has no words to match against titles.", "returned_no_results")
            return QueryResponse(metadata={"issues": [issue]})
        # The registry only calls this engine when the asset exists, so find_asset cannot return None here.
        asset = context.find_asset(TITLE_INDEX)
        assert asset is not None
        objects = context.get_component(asset.store)
        entries = await asyncio.to_thread(_load_entries, objects, asset.metadata.get("prefix", INDEX_PREFIX))
        best: dict[str, QueryResult] = {}
        for entry in entries:
            answers_to = entry_words(entry)
            points = score(wanted, answers_to, entry["kind"])
            if points <= 0:
                continue
            chunk = chunk_from_dict(entry["chunk"])
            if not matches_filters(chunk.provenance(), request.filters):
                continue
            # A chunk can be hit as a title and as a heading: keep its best reason.
            if chunk.id in best and best[chunk.id].score >= points:
                continue
            result = chunk_result(chunk, points, self.mode)
            best[chunk.id] = attrs.evolve(
                result,
                metadata={
                    **result.metadata,
                    "matched_kind": entry["kind"],
                    "matched_text": entry["text"],
                    "matched_words": sorted(wanted & answers_to),
                    "title": entry["title"],
                },
            )
        ranked = sorted(best.values(), key=lambda r: (-r.score, r.id))
        return QueryResponse(results=ranked[: request.top_k], metadata={"index_entries": len(entries)})
