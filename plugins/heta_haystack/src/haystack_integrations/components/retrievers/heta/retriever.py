"""``HetaRetriever``: a Haystack retriever component over a Heta knowledge base."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict
from heta_framework.kb.knowledge_base import KnowledgeBase
from heta_framework.kb.retrieval import KnowledgeBaseSource, QuerySettings, query_async, query_blocking, result_metadata
from heta_framework.kb.search import QueryResponse


@component
class HetaRetriever:
    """Documents from ``kb.query``: ``{"documents": [Document(id, content, meta, score)]}``.

    ``knowledge_base`` is a ``KnowledgeBase`` or the path of a knowledge-base folder, opened by
    ``warm_up`` or on first use; ``to_dict`` stores the path, never the object. ``mode=None``
    lets Heta choose the best available mode; ``principals`` are who it queries as (only public
    documents without them, docs/security.md). ``filters`` are Heta's metadata filters
    (``{"topic": "ocean"}``, a list matches any of its values), not Haystack's filter syntax.
    ``run`` blocks on ``kb.sync`` (works from threads and inside a running event loop);
    ``run_async`` awaits ``kb.query`` on the caller's loop.
    """

    def __init__(
        self,
        knowledge_base: KnowledgeBase | str | Path,
        mode: str | None = None,
        top_k: int = 10,
        filters: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        principals: Sequence[str] | None = None,
    ) -> None:
        self._source = KnowledgeBaseSource(knowledge_base)
        self.settings = QuerySettings(mode=mode, top_k=top_k, filters=filters, options=options, principals=principals)

    def warm_up(self) -> None:
        """Open the knowledge base (and so its models) before the first query."""
        self._source.get()

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            knowledge_base=str(self._source.path),
            mode=self.settings.mode,
            top_k=self.settings.top_k,
            filters=dict(self.settings.filters),
            options=dict(self.settings.options),
            principals=list(self.settings.principals),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HetaRetriever:
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(
        self,
        query: str,
        top_k: int | None = None,
        filters: dict[str, Any] | None = None,
        mode: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> dict[str, list[Document]]:
        """The documents for ``query``; a given ``top_k``, ``filters``, ``mode`` or ``options`` replaces the component's."""
        settings = self.settings.override(top_k=top_k, filters=filters, mode=mode, options=options)
        return {"documents": _documents(query_blocking(self._source, query, settings))}

    @component.output_types(documents=list[Document])
    async def run_async(
        self,
        query: str,
        top_k: int | None = None,
        filters: dict[str, Any] | None = None,
        mode: str | None = None,
        options: dict[str, Any] | None = None,
    ) -> dict[str, list[Document]]:
        """Like ``run``, awaited on the caller's loop (``Pipeline.run_async``)."""
        settings = self.settings.override(top_k=top_k, filters=filters, mode=mode, options=options)
        return {"documents": _documents(await query_async(self._source, query, settings))}

    def close(self) -> None:
        """Close the knowledge base if the component opened it from a path."""
        self._source.close()


def _documents(response: QueryResponse) -> list[Document]:
    return [Document(id=r.id, content=r.text, meta=result_metadata(r, response), score=r.score) for r in response.results]
