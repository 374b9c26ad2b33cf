"""``QueryMemo``: work shared by every engine one request runs, so a composed mode does it once.

``hybrid_search`` runs ``vector_search`` and ``heta_graph_search`` concurrently,
and both need the query's embedding; ``heta_rerank_search`` runs hybrid and
full-text on top. Embedding the same text with the same model twice doubled the
cost of a composed query (about 40 ms each on a CPU). The memo lives exactly as
long as one top-level ``kb.query()``: nothing is cached across requests, so a
rebuilt index or a changed model is never answered with stale work.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from heta_framework.common.models import embed_queries


class QueryMemo:
    """Single-flight query embeddings per ``(model name, text)`` inside one request."""

    def __init__(self) -> None:
        self._embeddings: dict[tuple[str, str], asyncio.Future[Any]] = {}
        #: how many times a model was actually asked (a test and the trace can check "once per request")
        self.embedding_calls = 0

    async def embed(self, client: Any, text: str) -> Any:
        """The query vector of ``text`` from ``client`` (``embed_queries(client, [text])``, row 0), computed once.

        Concurrent callers of the same key wait for the first one's result; a
        failure reaches every waiter and is not remembered.
        """
        key = (str(getattr(client, "model_name", id(client))), text)
        pending = self._embeddings.get(key)
        if pending is None:
            pending = asyncio.get_running_loop().create_future()
            self._embeddings[key] = pending
            self.embedding_calls += 1
            try:
                vectors = await embed_queries(client, [text])
            except asyncio.CancelledError:
                del self._embeddings[key]
                pending.cancel()
                raise
            except Exception as exc:
                del self._embeddings[key]
                pending.set_exception(exc)
                pending.exception()  # retrieved: a failure nobody else awaited is not logged as unhandled
                raise
            pending.set_result(vectors[0])
        return await asyncio.shield(pending)

    async def embed_many(self, client: Any, texts: Sequence[str]) -> list[Any]:
        """The vectors of ``texts``, in order; the ones not yet computed in this request go to the model in one call.

        A mode that searches with several texts (LightRAG: the query and its two
        keyword lists) pays one model call, and a base mode it calls later
        (``vector_search`` on the query) finds its vector here.
        """
        model = str(getattr(client, "model_name", id(client)))
        missing = [text for text in dict.fromkeys(texts) if (model, text) not in self._embeddings]
        if missing:
            loop = asyncio.get_running_loop()
            futures = {text: loop.create_future() for text in missing}
            for text, future in futures.items():
                self._embeddings[(model, text)] = future
            self.embedding_calls += 1
            try:
                vectors = await embed_queries(client, missing)
            except BaseException as exc:
                for text, future in futures.items():
                    del self._embeddings[(model, text)]
                    if isinstance(exc, asyncio.CancelledError):
                        future.cancel()
                    else:
                        future.set_exception(exc)
                        future.exception()  # retrieved: a failure nobody else awaited is not logged as unhandled
                raise
            for text, vector in zip(missing, vectors):
                futures[text].set_result(vector)
        return [await asyncio.shield(self._embeddings[(model, text)]) for text in texts]
