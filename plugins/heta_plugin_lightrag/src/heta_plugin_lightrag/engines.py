"""The four LightRAG query modes: ``lightrag_local``, ``lightrag_global``, ``lightrag_hybrid``, ``lightrag_mix``.

Each request: keywords (``extraction.py``: one language-model call, cached, or
offline), then one embedding call for every text it searches with (the query
and the keyword lists, through the request's ``QueryMemo``, so ``vector_search``
in mix mode finds the query's vector there), then the graph context
(``graph_context.py``).

Results are the context's entities and relations (kinds ``entity`` and
``relation``, ids ``entity:<id>`` / ``relation:<id>`` as in
``heta_graph_search``), interleaved, each with the chunks chosen for it as
``evidence``; scores are 1/position. ``lightrag_mix`` fuses them with
``vector_search``'s chunks by RRF (evidence chunks rank with their fact, see
core's fusion), so its results hold chunks too. ``metadata["keywords"]`` has
both keyword lists and their source, ``metadata["context"]`` the token
accounting of the budgets.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import numpy as np
from heta_framework.builtin.engines.fusion import RankedList, merge_issues, reciprocal_rank_fusion
from heta_framework.kb.query_options import query_options
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, SearchAssetRef, query_issue
from heta_framework.kb.steps import model_ref
from heta_plugin_graph.vectors import ENTITY_COLLECTION, RELATION_COLLECTION
from heta_plugin_graph.visibility import fact_visibility

from heta_plugin_lightrag.extraction import query_keywords
from heta_plugin_lightrag.graph_context import RankedFacts, build_context, global_facts, local_facts, merge
from heta_plugin_lightrag.options import LightRagMixOptions, LightRagOptions

GRAPH_ASSETS = frozenset({SearchAssetRef(kind="graph_tables"), SearchAssetRef(kind="graph_vector_index")})
EMBEDDING = model_ref("embedding")


class _LightRagEngine:
    mode: ClassVar[str]
    levels: ClassVar[tuple[str, ...]]  # "local", "global"
    with_vector_chunks: ClassVar[bool] = False
    required_assets: ClassVar[frozenset[SearchAssetRef]] = GRAPH_ASSETS
    required_components: ClassVar[frozenset] = frozenset({EMBEDDING})
    options_type: ClassVar[type] = LightRagOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: LightRagOptions = query_options(self, request)
        tables = context.find_asset(SearchAssetRef(kind="graph_tables"))
        index = context.find_asset(SearchAssetRef(kind="graph_vector_index"))
        graph = context.get_component(tables.store if tables else "stores.graph")
        vector_store = context.get_component(index.store if index else "stores.vector")
        names = dict((index.metadata if index else {}).get("collections") or {})
        entity_name, relation_name = names.get("entities", ENTITY_COLLECTION), names.get("relations", RELATION_COLLECTION)

        keywords, issues = await query_keywords(context, request.text, graph)
        metadata: dict[str, Any] = {"keywords": keywords.to_metadata()}
        if not vector_store.has_collection(entity_name):
            issues.append(query_issue("empty_graph", "The graph has no entity vectors yet.", "returned_nothing"))
            return QueryResponse(metadata={**metadata, "issues": issues})
        # what each level searches with; an empty list searches with the query itself (LightRAG would skip the level)
        low = ", ".join(keywords.low_level) or request.text
        high = ", ".join(keywords.high_level) or request.text
        texts = [*(["query"] if self.with_vector_chunks else []), *(["low"] if "local" in self.levels else []),
                 *(["high"] if "global" in self.levels else [])]
        by_name = {"query": request.text, "low": low, "high": high}
        vectors = await context.memo.embed_many(context.get_component(EMBEDDING.key), [by_name[t] for t in texts])
        vector_of = {name: np.asarray(v, dtype=np.float32).reshape(1, -1) for name, v in zip(texts, vectors)}

        vector_response = None
        if self.with_vector_chunks:  # the query's vector is in the memo: vector_search embeds nothing
            vector_response = await context.query(request.text, mode="vector_search", top_k=max(options.chunk_top_k, 1))
            issues += list(vector_response.issues)
        entity_index = vector_store.collection(entity_name)
        relation_index = vector_store.collection(relation_name) if vector_store.has_collection(relation_name) else None
        graph_context = await asyncio.to_thread(
            self._context, graph, entity_index, relation_index, vector_of, request, options,
            vector_response.results if vector_response is not None else (),
        )
        metadata["context"] = dict(graph_context.accounting)
        results = list(graph_context.facts)
        if vector_response is not None:
            mix: LightRagMixOptions = options  # type: ignore[assignment]
            selected = {c.id for c in graph_context.chunks}
            vector_chunks = [c for c in vector_response.results if c.id in selected]  # within chunk_top_k and the budget
            results = reciprocal_rank_fusion(
                [RankedList(self.mode, graph_context.facts), RankedList("vector_search", vector_chunks)], rrf_k=mix.rrf_k
            )
            results = [r for r in results if r.kind != "chunk" or r.id in selected]
        if issues:
            metadata["issues"] = merge_issues(issues)
        return QueryResponse(results=results[: request.top_k], metadata=metadata)

    def _context(self, graph, entity_index, relation_index, vector_of, request, options, vector_chunks):
        visible = fact_visibility(graph, request)  # the caller's documents and the request's document filter
        local = local_facts(graph, entity_index, vector_of["low"], options, visible) if "local" in self.levels else RankedFacts()
        global_ = global_facts(graph, relation_index, vector_of["high"], options, visible) if "global" in self.levels else RankedFacts()
        ranked = merge(local, global_) if len(self.levels) == 2 else (local if "local" in self.levels else global_)
        return build_context(
            graph, ranked, query=request.text, mode=self.mode, options=options, filters=request.filters, vector_chunks=vector_chunks,
            visible=visible,
        )


class LightRagLocalEngine(_LightRagEngine):
    """Entities matching the low-level keywords, their one-hop relations and evidence chunks."""

    mode: ClassVar[str] = "lightrag_local"
    #: the upstream Heta framework's name for this mode, so existing calls keep working
    aliases: ClassVar[tuple[str, ...]] = ("light_rag_local_query",)
    levels: ClassVar[tuple[str, ...]] = ("local",)


class LightRagGlobalEngine(_LightRagEngine):
    """Relations matching the high-level keywords, their endpoint entities and evidence chunks."""

    mode: ClassVar[str] = "lightrag_global"
    aliases: ClassVar[tuple[str, ...]] = ("light_rag_global_query",)
    levels: ClassVar[tuple[str, ...]] = ("global",)


class LightRagHybridEngine(_LightRagEngine):
    """Local and global contexts, merged round-robin."""

    mode: ClassVar[str] = "lightrag_hybrid"
    aliases: ClassVar[tuple[str, ...]] = ("light_rag_hybrid_query",)
    levels: ClassVar[tuple[str, ...]] = ("local", "global")


class LightRagMixEngine(_LightRagEngine):
    """The hybrid context and ``vector_search``'s chunks, fused by RRF under one chunk budget."""

    mode: ClassVar[str] = "lightrag_mix"
    aliases: ClassVar[tuple[str, ...]] = ("light_rag_mix_query",)
    levels: ClassVar[tuple[str, ...]] = ("local", "global")
    with_vector_chunks: ClassVar[bool] = True
    required_assets: ClassVar[frozenset[SearchAssetRef]] = GRAPH_ASSETS | {SearchAssetRef(kind="chunk_vector_index")}
    options_type: ClassVar[type] = LightRagMixOptions


ENGINES = (LightRagLocalEngine, LightRagGlobalEngine, LightRagHybridEngine, LightRagMixEngine)
