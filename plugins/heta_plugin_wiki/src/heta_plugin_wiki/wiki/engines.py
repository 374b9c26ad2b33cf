"""The wiki's search modes. Results are sections (``kind="wiki_section"``), each keeping its page's ``document_id``:
a section is found exactly when its document is readable (stores filter by it; the in-memory search checks it).

``wiki_vector_search``     the query's vector against the sections' (``index_wiki_pages``)
``wiki_full_text_search``  BM25 over the sections (``split_wiki_pages``)
``wiki_hybrid_search``     both, fused by rank (reciprocal rank fusion, k=60)
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from heta_framework.common.models import embed_queries
from heta_framework.common.threads import in_thread
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAssetRef
from heta_framework.kb.steps import model_ref

from heta_plugin_wiki.access import readable
from heta_plugin_wiki.wiki import persist
from heta_plugin_wiki.wiki.lexical import bm25

RRF_K = 60


def section_result(metadata: dict[str, Any], section_id: str, score: float, mode: str) -> QueryResult:
    return QueryResult(id=section_id, text=metadata["text"], score=float(score), kind="wiki_section",
                       metadata={k: metadata[k] for k in ("document_id", "page_id", "title", "heading")}, sources=(mode,))


def _other_filters_match(metadata: dict[str, Any], filters: Any) -> bool:
    for key, wanted in filters.items():
        if key == "document_id":
            continue  # ``readable`` checks it, with the scope
        allowed = wanted if isinstance(wanted, (list, tuple, set, frozenset)) else [wanted]
        if metadata.get(key) not in allowed:
            return False
    return True


class WikiVectorSearchEngine:
    mode: ClassVar[str] = "wiki_vector_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({SearchAssetRef(persist.VECTORS_ASSET.kind)})
    required_components: ClassVar[frozenset] = frozenset({model_ref("embedding")})

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        store = context.store("vector")
        if not store.has_collection(persist.SECTION_COLLECTION):
            return QueryResponse()
        vector = (await embed_queries(context.embedding_model(), [request.text]))[0]
        collection = store.collection(persist.SECTION_COLLECTION)
        [hits] = await in_thread(collection.search, np.asarray([vector], dtype=np.float32), request.top_k, dict(request.filters))
        return QueryResponse(results=[section_result(dict(h.metadata), h.id, h.score, self.mode) for h in hits])


class WikiFullTextSearchEngine:
    mode: ClassVar[str] = "wiki_full_text_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({SearchAssetRef(persist.SECTIONS_ASSET.kind)})

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        sections = await in_thread(persist.load_sections, context.store("objects"))
        visible = [s for s in sections if readable(request, s["document_id"]) and _other_filters_match(s, request.filters)]
        found = await in_thread(bm25, request.text, visible, request.top_k)
        return QueryResponse(results=[section_result(s, s["id"], score, self.mode) for s, score in found])


class WikiHybridSearchEngine:
    mode: ClassVar[str] = "wiki_hybrid_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = (WikiVectorSearchEngine.required_assets
                                                              | WikiFullTextSearchEngine.required_assets)
    required_components: ClassVar[frozenset] = WikiVectorSearchEngine.required_components

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        candidates = min(request.top_k * 3, 50)
        fused: dict[str, float] = {}
        found: dict[str, QueryResult] = {}
        issues: list[Any] = []
        for mode in (WikiVectorSearchEngine.mode, WikiFullTextSearchEngine.mode):
            response = await context.query(request.text, mode=mode, top_k=max(candidates, request.top_k))
            issues += response.issues
            for rank, result in enumerate(response.results):
                fused[result.id] = fused.get(result.id, 0.0) + 1.0 / (RRF_K + rank + 1)
                found.setdefault(result.id, result)
        order = sorted(fused, key=lambda i: (-fused[i], i))[: request.top_k]
        results = [QueryResult(id=i, text=found[i].text, score=fused[i], kind=found[i].kind, metadata=found[i].metadata,
                               sources=(self.mode,)) for i in order]
        return QueryResponse(results=results, metadata={"issues": issues} if issues else {})
