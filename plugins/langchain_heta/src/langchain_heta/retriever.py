"""``HetaRetriever``: a LangChain ``BaseRetriever`` over a Heta knowledge base."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heta_framework.kb.knowledge_base import KnowledgeBase
from heta_framework.kb.retrieval import KnowledgeBaseSource, QuerySettings, query_async, query_blocking, result_metadata
from heta_framework.kb.search import QueryResponse
from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import PrivateAttr


class HetaRetriever(BaseRetriever):
    """Documents from ``kb.query``: one ``Document(page_content, id, metadata)`` per result.

    ``knowledge_base`` is a ``KnowledgeBase`` or the path of a knowledge-base folder (opened on
    first use). ``mode=None`` lets Heta choose the best available mode. ``invoke`` (and ``batch``)
    block on ``kb.sync``, so they work from threads and inside a running event loop; ``ainvoke``
    awaits ``kb.query`` on the caller's loop. ``mode``, ``top_k``, ``filters`` and ``options`` can
    also be given per call: ``retriever.invoke("text", top_k=3)``.
    """

    knowledge_base: KnowledgeBase | str | Path
    mode: str | None = None
    top_k: int = 10
    filters: dict[str, Any] = {}
    options: dict[str, Any] = {}
    #: who the retriever queries as (docs/security.md); empty: public documents only
    principals: list[str] = []

    _source: KnowledgeBaseSource = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        super().model_post_init(context)
        self._source = KnowledgeBaseSource(self.knowledge_base)

    def _settings(self, overrides: Mapping[str, Any]) -> QuerySettings:
        unknown = set(overrides) - {"mode", "top_k", "filters", "options"}
        if unknown:
            raise TypeError(f"HetaRetriever takes mode, top_k, filters and options per call, not {sorted(unknown)}")
        settings = QuerySettings(mode=self.mode, top_k=self.top_k, filters=self.filters, options=self.options, principals=self.principals)
        return settings.override(**overrides)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        return _documents(query_blocking(self._source, query, self._settings(overrides)))

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **overrides: Any
    ) -> list[Document]:
        return _documents(await query_async(self._source, query, self._settings(overrides)))

    def close(self) -> None:
        """Close the knowledge base if the retriever opened it from a path."""
        self._source.close()


def _documents(response: QueryResponse) -> list[Document]:
    return [Document(page_content=r.text, id=r.id, metadata=result_metadata(r, response)) for r in response.results]
