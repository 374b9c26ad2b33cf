"""``memory_search``: Hebb Mind style memory recall over a knowledge base.

1. Recall from ``vector_search``, ``full_text_search`` and ``heta_graph_search``, whichever
   are built (``sql_text_search`` stands in when none is), each ``candidate_top_k`` deep.
2. Fuse by RRF per chunk (a graph fact counts for its evidence chunks: ``fusion.py``).
3. Score each chunk by recency, importance and relevance (``memory_scoring.py``), per-request weights.
4. With ``models.reranker`` in the recipe (and ``rerank`` on), the reranker reorders the scored
   candidates; without one the composite order stands.
5. ``related``: chunks one graph hop from the results' entities (``memory_related.py``), through
   what the caller may read only.
6. The returned chunks' last-access time becomes now for the caller's principal set
   (``memory_access.py``; off with ``update_access``): one caller's reads never reorder another's.

The mode is available as soon as one leg is built (``ANY_LEG``): it needs no particular
leg, and a leg that is not built is reported in ``metadata["issues"]`` as
``memory_leg_unavailable`` instead of making the mode unavailable.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
from heta_framework.builtin.engines.fusion import RankedList, merge_issues, reciprocal_rank_fusion
from heta_framework.builtin.engines.mode_assets import (
    CHUNK_FULL_TEXT_INDEX,
    CHUNK_TEXT_INDEX,
    CHUNK_VECTOR_INDEX,
    GRAPH_TABLES,
    GRAPH_VECTOR_INDEX,
)
from heta_framework.builtin.engines.model_failures import describe_failure
from heta_framework.errors import ModeUnavailableError
from heta_framework.kb.query_options import query_options
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, QueryResult, query_issue

from heta_server.memory_access import access_log, scope_key
from heta_server.memory_options import MemorySearchOptions
from heta_server.memory_related import related_chunks
from heta_server.memory_scoring import best_possible_rrf, composite, importance_of, recency, relevance_of

log = logging.getLogger(__name__)

MODE = "memory_search"
LEGS = ("vector_search", "full_text_search", "heta_graph_search")
FALLBACK_LEG = "sql_text_search"
RERANKER = "models.reranker"


@attrs.frozen
class AnyOfAssets:
    """A required-asset entry met by an asset of any of ``kinds`` (the registry only calls ``matches`` and ``str``)."""

    kinds: tuple[str, ...]

    def matches(self, asset: Any) -> bool:
        return asset.kind in self.kinds

    def __str__(self) -> str:
        return "one of " + ", ".join(self.kinds)


#: the asset each leg (and the sql_text_search stand-in) is known by
ANY_LEG = AnyOfAssets(tuple(ref.kind for ref in (CHUNK_VECTOR_INDEX, CHUNK_FULL_TEXT_INDEX, GRAPH_VECTOR_INDEX, CHUNK_TEXT_INDEX)))


class MemorySearchEngine:
    """Three-way recall fused by RRF, then recency + importance + relevance, rerank, and graph ``related``."""

    mode: ClassVar[str] = MODE
    required_assets: ClassVar[frozenset[Any]] = frozenset({ANY_LEG})
    options_type: ClassVar[type] = MemorySearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: MemorySearchOptions = query_options(self, request)
        candidates = options.candidates(request.top_k)
        issues: list[dict[str, Any]] = []
        legs = [leg for leg in LEGS if context.is_available(leg)]
        for leg in LEGS:
            if leg not in legs and leg in context.knowledge_base.query_engines.modes:
                issues.append(query_issue(
                    "memory_leg_unavailable", f"{leg} is not built in this knowledge base; memory_search recalls without it.",
                    "skipped_leg", mode=leg,
                ))
        if not legs:
            if not context.is_available(FALLBACK_LEG):
                raise ModeUnavailableError(
                    "memory_search needs at least one of vector_search, full_text_search, heta_graph_search or "
                    "sql_text_search built: add their steps to the recipe and run `heta build`."
                )
            legs = [FALLBACK_LEG]
        responses = await asyncio.gather(*(context.query(request.text, mode=leg, top_k=candidates) for leg in legs))
        issues = merge_issues(issues, *(response.issues for response in responses))
        fused = reciprocal_rank_fusion(
            [RankedList(leg, response.results) for leg, response in zip(legs, responses)], rrf_k=options.rrf_k
        )
        chunks = [result for result in fused if result.kind == "chunk"]  # a memory is a chunk; facts count through their evidence
        if options.tags:
            chunks = [c for c in chunks if _has_tag(context, c, options.tags)]
        now = time.time()
        access_key = scope_key(request.access.principals if request.access is not None else None)
        ceiling = best_possible_rrf(len(legs), options.rrf_k)
        scored = await asyncio.to_thread(_score, context, chunks, options, now, issues, access_key, ceiling)
        ranking = "composite"
        if scored and options.rerank and context.has_component(RERANKER):
            try:
                scored = await _rerank(context, request.text, scored)
                ranking = "reranker"
            except Exception as exc:  # a failing reranker: the composite order is still a good answer
                log.warning("reranker failed, keeping the composite order: %s", type(exc).__name__)
                issues.append(query_issue(
                    "rerank_failed", f"The reranker call failed ({describe_failure(exc, context)}); results keep the composite order.",
                    "used_composite_order",
                ))
        results = scored[: request.top_k]
        related: list[dict[str, Any]] = []
        if options.related:
            related = await _related(context, request, results, options.related_top_k or request.top_k, issues)
        if options.update_access and results:
            await asyncio.to_thread(access_log(context.knowledge_base.path).record, [r.id for r in results], now, access_key)
        metadata: dict[str, Any] = {
            "fusion": {"rrf_k": options.rrf_k, "candidate_top_k": candidates, "legs": legs},
            "weights": options.weights(),
            "recency_decay": options.recency_decay,
            "ranking": ranking,
            "related": related,
        }
        if issues:
            metadata["issues"] = issues
        return QueryResponse(results=results, metadata=metadata)


def _document_metadata(context: QueryContext, result: QueryResult) -> dict[str, Any]:
    try:
        record = context.knowledge_base.document(result.document_id)
    except KeyError:
        return {}
    return dict(record.metadata)


def _has_tag(context: QueryContext, result: QueryResult, wanted: Sequence[str]) -> bool:
    tags = _document_metadata(context, result).get("tags", result.metadata.get("tags"))
    if isinstance(tags, str):
        tags = [t.strip() for t in tags.split(",")]
    return bool(set(tags or ()) & set(wanted))


def _score(context: QueryContext, chunks: list[QueryResult], options: MemorySearchOptions, now: float,
           issues: list[dict[str, Any]], access_key: str, ceiling: float) -> list[QueryResult]:
    """Chunks with their composite score (best first; ties keep the RRF order); recency is ``access_key``'s callers' own.

    ``ceiling``: the fused score of a chunk every leg ranked first (``relevance_of``)."""
    if not chunks:
        return []
    accessed = access_log(context.knowledge_base.path).last_access([c.id for c in chunks], access_key)
    weights = options.weights()
    scored = []
    bad_importance: list[str] = []
    for chunk in chunks:
        document = _document_metadata(context, chunk)
        importance, usable = importance_of(document if "importance" in document else chunk.metadata)
        if not usable:
            bad_importance.append(str(chunk.document_id))
        last = accessed.get(chunk.id)
        if last is None:  # never returned yet: as old as its document's content
            record = _record(context, chunk)
            last = (record.updated or record.added) if record is not None else None
        scores = composite(recency(last, now, options.recency_decay), importance / 10.0, relevance_of(chunk.score, ceiling), weights)
        metadata = {
            **chunk.metadata,
            "fused_score": chunk.score,
            "recency_score": scores.recency_score,
            "importance_score_normalized": scores.importance_score_normalized,
            "relevance_score": scores.relevance_score,
            "last_access": last,
        }
        scored.append(attrs.evolve(chunk, score=scores.score, metadata=metadata))
    if bad_importance:
        issues.append(query_issue(
            "memory_importance_invalid",
            f"importance metadata must be a number from 0 to 10; document(s) {', '.join(sorted(set(bad_importance)))} "
            "got the default 5 instead.",
            "used_default_importance",
        ))
    return sorted(scored, key=lambda r: -r.score)  # stable: equal scores keep the fused order


def _record(context: QueryContext, result: QueryResult) -> Any:
    try:
        return context.knowledge_base.document(result.document_id)
    except KeyError:
        return None


async def _rerank(context: QueryContext, text: str, scored: list[QueryResult]) -> list[QueryResult]:
    reranker = context.reranker()
    hits = await reranker.rerank(text, [r.text for r in scored], len(scored))
    reordered: list[QueryResult] = []
    seen: set[int] = set()
    for hit in hits:
        if not 0 <= hit.index < len(scored) or hit.index in seen:
            raise ValueError(f"reranker returned index {hit.index} for {len(scored)} documents")
        seen.add(hit.index)
        result = scored[hit.index]
        reordered.append(attrs.evolve(result, metadata={**result.metadata, "rerank_score": float(hit.score)}))
    if not reordered:
        raise ValueError("reranker returned no results")
    return reordered


async def _related(context: QueryContext, request: QueryRequest, results: list[QueryResult], limit: int,
                   issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    tables = context.find_asset(GRAPH_TABLES)
    if tables is None:
        issues.append(query_issue(
            "memory_related_unavailable", "This knowledge base has no graph (graph_tables is not built), so related is empty.",
            "returned_no_related",
        ))
        return []
    graph = context.get_component(tables.store)
    scope = request.access
    # a caller who may not read everything needs the links counted over its documents alone: the plain reads
    readable = scope.allows if scope is not None and scope.restricted else None
    if not (hasattr(graph, "facts_of_documents") or (readable is None and hasattr(graph, "chunk_links"))):
        issues.append(query_issue(
            "memory_related_unavailable",
            f"The graph store {type(graph).__name__} cannot list the facts of documents, so related is empty.",
            "returned_no_related",
        ))
        return []
    found = await asyncio.to_thread(related_chunks, graph, results, limit, readable)
    return [chunk.to_dict() for chunk in found]
