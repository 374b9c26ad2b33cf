"""What a framework retriever (LangChain, LlamaIndex, Haystack) needs from a knowledge base, in one place.

The three integrations (``plugins/langchain_heta``, ``plugins/llama_index_retrievers_heta``,
``plugins/heta_haystack``) each turn a ``QueryResult`` into their framework's document type.
They share this module so that they agree on three things: how a knowledge base given as a
path is opened (once, on first use, from any thread), which loop runs a query (``kb.sync``'s
background loop for blocking calls, the caller's loop for ``await``), and the flat,
JSON-able metadata each document carries.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from heta_framework.contracts.search import QueryResponse, QueryResult
from heta_framework.kb.knowledge_base import KnowledgeBase

logger = logging.getLogger(__name__)

#: provenance keys copied from each evidence chunk of a graph fact
_EVIDENCE_KEYS = ("document_id", "source", "start", "end", "page")


def _plain_dict(value: Mapping[str, Any] | None) -> dict[str, Any]:
    return dict(value or {})


@attrs.frozen
class QuerySettings:
    """The query a retriever runs for each text: ``mode=None`` lets Heta pick the best available mode."""

    mode: str | None = None
    top_k: int = 10
    filters: Mapping[str, Any] = attrs.field(factory=dict, converter=_plain_dict)
    options: Mapping[str, Any] = attrs.field(factory=dict, converter=_plain_dict)
    #: who the retriever queries as (docs/security.md); empty: public documents only
    principals: tuple[str, ...] = attrs.field(default=(), converter=lambda value: tuple(value or ()))

    def override(self, **changes: Any) -> QuerySettings:
        """These settings with every change that is not ``None`` (a framework's per-call arguments)."""
        given = {name: value for name, value in changes.items() if value is not None}
        return attrs.evolve(self, **given) if given else self

    def query_arguments(self) -> dict[str, Any]:
        return {"mode": self.mode, "top_k": self.top_k, "filters": dict(self.filters), "options": dict(self.options),
                "principals": list(self.principals)}


class KnowledgeBaseSource:
    """A knowledge base given as an object, or as a folder opened with ``KnowledgeBase.load`` on first use.

    Opening is guarded by a lock so that threads racing on a fresh retriever (LangChain's
    ``batch``) share one ``KnowledgeBase`` and so one set of loaded models.
    """

    def __init__(self, knowledge_base: KnowledgeBase | str | Path):
        if isinstance(knowledge_base, KnowledgeBase):
            self._kb: KnowledgeBase | None = knowledge_base
            self.path = knowledge_base.path
            self._owned = False
        elif isinstance(knowledge_base, (str, Path)):
            self._kb = None
            self.path = Path(knowledge_base)
            self._owned = True
        else:
            raise TypeError(
                f"knowledge_base must be a heta_framework KnowledgeBase or the path of a knowledge-base folder, "
                f"got {type(knowledge_base).__name__}"
            )
        self._open_lock = threading.Lock()

    def get(self) -> KnowledgeBase:
        with self._open_lock:
            if self._kb is None:
                self._kb = KnowledgeBase.load(self.path)
            return self._kb

    def close(self) -> None:
        """Close the knowledge base if this source opened it (one passed in belongs to the caller)."""
        if not self._owned:
            return
        with self._open_lock:
            kb, self._kb = self._kb, None
        if kb is not None:
            kb.close()


def query_blocking(source: KnowledgeBaseSource, text: str, settings: QuerySettings) -> QueryResponse:
    """From any thread, and from inside a running event loop: ``kb.sync`` runs the query on its own loop thread."""
    response = source.get().sync.query(text, **settings.query_arguments())
    _log_issues(response)
    return response


async def query_async(source: KnowledgeBaseSource, text: str, settings: QuerySettings) -> QueryResponse:
    """On the caller's loop (``await kb.query``): async model clients belong to the loop that first uses them."""
    response = await source.get().query(text, **settings.query_arguments())
    _log_issues(response)
    return response


def _log_issues(response: QueryResponse) -> None:
    # a retriever returns documents only, so a query's recoverable issues would otherwise be lost
    for issue in response.issues:
        logger.warning("Heta query issue %s: %s (%s)", issue.get("code"), issue.get("message"), issue.get("action"))


def result_metadata(result: QueryResult, response: QueryResponse) -> dict[str, Any]:
    """Flat, JSON-able metadata: the result's provenance plus ``id``, ``score``, ``mode``, ``kind``, ``found_by``.

    ``found_by`` lists the modes that found the result (several for a fused mode); ``evidence``
    (graph facts only) gives the provenance of each chunk the fact came from.
    """
    metadata: dict[str, Any] = dict(result.metadata)
    metadata.update(
        id=result.id,
        score=result.score,
        mode=response.metadata.get("mode"),
        kind=result.kind,
        found_by=list(result.sources),
    )
    if result.evidence:
        metadata["evidence"] = [
            {"id": chunk.id, **{key: chunk.metadata[key] for key in _EVIDENCE_KEYS if key in chunk.metadata}}
            for chunk in result.evidence
        ]
    return metadata


def origin_document_id(result: QueryResult) -> str | None:
    """The document a result comes from: its own, or (for a graph fact) that of its first evidence chunk."""
    if result.document_id:
        return result.document_id
    return next((chunk.document_id for chunk in result.evidence if chunk.document_id), None)
