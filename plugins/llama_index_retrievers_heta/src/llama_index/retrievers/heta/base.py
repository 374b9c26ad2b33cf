"""``HetaRetriever``: a LlamaIndex ``BaseRetriever`` over a Heta knowledge base."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from heta_framework.kb.knowledge_base import KnowledgeBase
from heta_framework.kb.retrieval import (
    KnowledgeBaseSource,
    QuerySettings,
    origin_document_id,
    query_async,
    query_blocking,
    result_metadata,
)
from heta_framework.kb.search import QueryResponse, QueryResult
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeRelationship, NodeWithScore, ObjectType, QueryBundle, RelatedNodeInfo, TextNode

#: the metadata a response synthesiser shows the LLM with each node; the rest (offsets, scores) is for the program
LLM_METADATA_KEYS = frozenset({"source", "document_id", "page", "name"})


class HetaRetriever(BaseRetriever):
    """Nodes from ``kb.query``: one ``NodeWithScore`` per result, its ``TextNode`` linked to its document.

    ``knowledge_base`` is a ``KnowledgeBase`` or the path of a knowledge-base folder (opened on
    first use). ``mode=None`` lets Heta choose the best available mode. ``retrieve`` blocks on
    ``kb.sync`` (works from threads and inside a running event loop); ``aretrieve`` awaits
    ``kb.query`` on the caller's loop.
    """

    def __init__(
        self,
        knowledge_base: KnowledgeBase | str | Path,
        *,
        mode: str | None = None,
        top_k: int = 10,
        filters: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        principals: Sequence[str] | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self._source = KnowledgeBaseSource(knowledge_base)
        self.settings = QuerySettings(mode=mode, top_k=top_k, filters=filters, options=options, principals=principals)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return _nodes(query_blocking(self._source, query_bundle.query_str, self.settings))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return _nodes(await query_async(self._source, query_bundle.query_str, self.settings))

    def close(self) -> None:
        """Close the knowledge base if the retriever opened it from a path."""
        self._source.close()


def _nodes(response: QueryResponse) -> list[NodeWithScore]:
    return [NodeWithScore(node=_text_node(result, response), score=result.score) for result in response.results]


def _text_node(result: QueryResult, response: QueryResponse) -> TextNode:
    metadata = result_metadata(result, response)
    relationships = {}
    document_id = origin_document_id(result)
    if document_id:
        source = {"source": metadata["source"]} if metadata.get("source") else {}
        relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=document_id, node_type=ObjectType.DOCUMENT, metadata=source)
    hidden = [key for key in metadata if key not in LLM_METADATA_KEYS]
    return TextNode(
        id_=result.id,
        text=result.text,
        metadata=metadata,
        relationships=relationships,
        start_char_idx=metadata.get("start"),
        end_char_idx=metadata.get("end"),
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=hidden,
    )
