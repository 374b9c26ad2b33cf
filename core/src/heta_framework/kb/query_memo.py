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
from typing import Any


class QueryMemo:
    """Single-flight query embeddings per ``(model name, text)`` inside one request."""

    def __init__(self) -> None:
        self._embeddings: dict[tuple[str, str], asyncio.Future[Any]] = {}
        #: how many times a model was actually asked (a test and the trace can check "once per request")
        self.embedding_calls = 0

    async def embed(self, client: Any, text: str) -> Any:
        """The vector of ``text`` from ``client`` (``await client.embed([text])``, row 0), computed once.

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
                vectors = await client.embed([text])
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
