"""``heta_rewrite_search``: the language model writes query variants; each is searched; results are fused by RRF.

The original query is always searched too, so rewriting can only add recall.
If the model call fails or its output holds no usable variant, the mode runs
one plain base search and says so in ``metadata["issues"]`` (action
``used_base_search``) instead of failing or hiding it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any, ClassVar

from heta_framework.builtin.answering import parse_json_object
from heta_framework.builtin.engines.composed_options import RewriteSearchOptions, forwarded_options
from heta_framework.builtin.engines.fusion import RankedList, merge_issues, reciprocal_rank_fusion
from heta_framework.builtin.engines.mode_assets import assets_of
from heta_framework.builtin.engines.model_failures import describe_failure
from heta_framework.common.models import Message
from heta_framework.contracts.components import ComponentRef, model_ref
from heta_framework.contracts.query_options import query_options
from heta_framework.contracts.search import QueryContext, QueryRequest, QueryResponse, SearchAssetRef, query_issue

log = logging.getLogger(__name__)

LANGUAGE = model_ref("language")

REWRITE_SCHEMA = {
    "type": "object",
    "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
    "required": ["queries"],
}

REWRITE_PROMPT = (
    "You rewrite search queries for a document retrieval system. Write {count} different search queries "
    "that look for the same information as the user's query: use synonyms, spell out abbreviations, "
    "name the likely key terms. Keep the language of the query. Reply only with JSON: "
    '{{"queries": ["...", "..."]}}.'
)


class RewriteSearchEngine:
    """Query rewriting over a base mode (``heta_rerank_search`` by default).

    ``RewriteSearchEngine(base_mode="hybrid_search", mode="hybrid_rewrite_search")``
    registers a variant over another base mode; a base mode that is not built in
    also needs ``required_assets``. Options: ``candidate_top_k`` (results taken
    from each base search, default ``min(top_k * 3, 50)``), ``rrf_k`` (60); the
    fusion options are also handed down to the base mode.
    """

    def __init__(
        self,
        base_mode: str = "heta_rerank_search",
        *,
        mode: str = "heta_rewrite_search",
        variant_count: int = 3,
        required_assets: Iterable[SearchAssetRef] | None = None,
    ):
        if variant_count < 1:
            raise ValueError(f"variant_count must be at least 1, got {variant_count}")
        self.mode = mode
        self.base_mode = base_mode
        self.variant_count = variant_count
        self.required_assets: frozenset[SearchAssetRef] = assets_of(base_mode, required_assets)
        self.required_components: frozenset[ComponentRef] = frozenset({LANGUAGE})

    options_type: ClassVar[type] = RewriteSearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: RewriteSearchOptions = query_options(self, request)
        variants, issue = await self._variants(request, context)
        if issue is not None:
            return await self._base_search_only(request, context, issue)
        candidates = options.candidates(request.top_k)
        smoothing = options.rrf_k
        queries = [request.text, *variants]
        responses = await asyncio.gather(
            *(
                context.query(text, mode=self.base_mode, top_k=candidates, options=forwarded_options(request, context, self.base_mode))
                for text in queries
            )
        )
        fused = reciprocal_rank_fusion(
            [RankedList(f"query:{i}", response.results) for i, response in enumerate(responses)],
            rrf_k=smoothing,
        )
        metadata: dict[str, Any] = {
            "queries": queries,
            "fusion": {"rrf_k": smoothing, "candidate_top_k": candidates},
        }
        issues = merge_issues(*(response.issues for response in responses))
        if issues:
            metadata["issues"] = issues
        return QueryResponse(results=fused[: request.top_k], metadata=metadata)

    async def _variants(self, request: QueryRequest, context: QueryContext) -> tuple[list[str], dict[str, Any] | None]:
        """(variants, None) or ([], the issue that explains why there are none)."""
        model = context.language_model()
        messages = [
            Message("system", REWRITE_PROMPT.format(count=self.variant_count)),
            Message("user", request.text),
        ]
        try:
            completion = await model.complete(messages, json_schema=REWRITE_SCHEMA)
        except Exception as exc:  # a lost model must not lose the search
            log.warning("query rewrite failed: %s", type(exc).__name__)
            return [], query_issue(
                "rewrite_failed", f"The language model call failed ({describe_failure(exc, context)}).", "used_base_search"
            )
        data = parse_json_object(completion.text)
        queries = data.get("queries") if data is not None else None
        if not isinstance(queries, list):
            return [], query_issue("rewrite_invalid_output", "Language model did not return a queries list.", "used_base_search")
        variants = _usable_variants(queries, request.text)[: self.variant_count]
        if not variants:
            return [], query_issue(
                "rewrite_empty_output",
                "Language model returned no query variant that differs from the original query.",
                "used_base_search",
            )
        return variants, None

    async def _base_search_only(self, request: QueryRequest, context: QueryContext, issue: dict[str, Any]) -> QueryResponse:
        response = await context.query(
            request.text, mode=self.base_mode, top_k=request.top_k, options=forwarded_options(request, context, self.base_mode)
        )
        metadata: dict[str, Any] = {"queries": [request.text], "issues": merge_issues([issue], response.issues)}
        return QueryResponse(results=response.results, metadata=metadata)


def _usable_variants(queries: list[Any], original: str) -> list[str]:
    """Non-empty strings, each once, none equal to the original (ignoring case and spacing)."""
    seen = {" ".join(original.split()).casefold()}
    variants = []
    for query in queries:
        if not isinstance(query, str):
            continue
        normalised = " ".join(query.split()).casefold()
        if normalised and normalised not in seen:
            seen.add(normalised)
            variants.append(" ".join(query.split()))
    return variants
