"""``vector_search``: embed the query, search the ``chunks`` collection, return chunks with provenance.

Options (``kb.query(..., options={...})``):

* ``min_score`` — drop hits whose cosine similarity is below it;
* ``vector``    — a precomputed query vector (list of floats); the query text is then not embedded.

Filters match chunk metadata exactly (``document_id``, ``source``, ``name``, any
chunk metadata key); a list value means any of its values.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
from heta_framework.common.validators import number, number_vector
from heta_framework.errors import ModelError
from heta_framework.kb.query_options import query_options
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAssetRef
from heta_framework.kb.steps import ComponentRef, model_ref
from heta_framework.kb.stores import VectorStoreProtocol
from heta_framework.kb.tracing import store_span

from heta_plugin_vector.steps import CHUNK_COLLECTION

_ASSET = SearchAssetRef(kind="chunk_vector_index")


@attrs.frozen
class VectorSearchOptions:
    #: drop hits whose cosine similarity is below it
    min_score: float | None = attrs.field(default=None, validator=number(optional=True))
    #: a precomputed query vector; the query text is then not embedded
    vector: Sequence[float] | None = attrs.field(default=None, validator=number_vector())


def hit_result(hit: Any, mode: str) -> QueryResult:
    metadata = dict(hit.metadata)
    text = metadata.pop("text", "")
    return QueryResult(id=hit.id, text=text, score=float(hit.score), kind="chunk", metadata=metadata, sources=(mode,))


class VectorSearchEngine:
    mode: ClassVar[str] = "vector_search"
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({_ASSET})
    required_components: ClassVar[frozenset[ComponentRef]] = frozenset({model_ref("embedding")})
    options_type: ClassVar[type] = VectorSearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: VectorSearchOptions = query_options(self, request)
        asset = context.find_asset(_ASSET)
        asset_metadata = dict(asset.metadata) if asset else {}
        store: VectorStoreProtocol = context.get_component(asset.store if asset else "stores.vector")
        collection = store.collection(asset_metadata.get("collection", CHUNK_COLLECTION))
        built_model = asset_metadata.get("embedding_model")  # described by index_vectors on every build
        vector = options.vector
        if vector is None:
            client = context.embedding_model()
            if built_model is not None and built_model != client.model_name:
                raise ModelError(
                    f"The vector index was built with embedding model {built_model!r}, but the recipe's embedding model is "
                    f"{client.model_name!r}. Query with the same model (KnowledgeBase.load(path, models=...)) or rebuild the "
                    "knowledge base with the new model (kb.delete(), then kb.build())."
                )
            vector = await context.embed_query(request.text)  # once per request, however many modes need it
        query = np.asarray(vector, dtype=np.float32).reshape(1, -1)
        if query.shape[1] != collection.dimension:
            raise ModelError(
                f"The query vector has {query.shape[1]} dimensions but the index holds {collection.dimension}-d vectors "
                f"(built with {built_model or 'another model'}). Use the embedding model the index was built with."
            )
        with store_span("vector.search", asset.store if asset else "stores.vector", {"heta.store.collection": collection.name,
                                                                                     "heta.query.top_k": request.top_k}):
            hits = (await asyncio.to_thread(collection.search, query, request.top_k, dict(request.filters)))[0]
        if options.min_score is not None:
            hits = [h for h in hits if h.score >= float(options.min_score)]
        return QueryResponse(
            results=[hit_result(h, self.mode) for h in hits],
            metadata={"collection": collection.name, "embedding_model": built_model},
        )
