"""``POST /api/v1/query`` with ``"stream": true``: the results, the answer's pieces, then how it ended, as SSE.

Retrieval runs before the response starts, so a bad request or an unavailable mode is still a plain
HTTP error with its status; once the stream has started, every outcome is an event:

- ``results``: the response as ``heta query --json`` prints it, without ``answer`` and ``citations``;
- ``token`` (any number): ``{"text": ...}``, the answer as the model writes it;
- ``done``: ``{"answer", "citations", "usage", "issues", "mode"}``; or, when the model failed
  mid-answer, ``error``: the same plus ``{"error": {"code", "message"}}``. Either is the last event.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

from heta_framework.contracts.search import QueryResponse

from heta_server.answer_stream import AnswerEnd, Piece, stream_answer
from heta_server.sse import EventStream, sse_event


def query_event_stream(
    kb: Any, question: str, response: QueryResponse, *, wanted: bool, retrieval_ms: float, started: float,
) -> EventStream:
    return EventStream(_events(kb, question, response, wanted=wanted, retrieval_ms=retrieval_ms, started=started))


async def _events(kb: Any, question: str, response: QueryResponse, *, wanted: bool, retrieval_ms: float, started: float) -> AsyncIterator[bytes]:
    data = response.to_dict()
    data.pop("answer", None)
    data.pop("citations", None)
    yield sse_event(data, "results")
    async for item in stream_answer(kb, question, response, wanted=wanted):
        if isinstance(item, Piece):
            yield sse_event({"text": item.text}, "token")
        else:
            yield _end(item, response, retrieval_ms, started)


def _end(end: AnswerEnd, response: QueryResponse, retrieval_ms: float, started: float) -> bytes:
    usage = {**end.usage(), "retrieval_ms": round(retrieval_ms, 1), "total_ms": round((time.perf_counter() - started) * 1000, 1)}
    body: dict[str, Any] = {
        "answer": end.answer,
        "citations": [{"marker": c.marker, "result_id": c.result_id, "text": c.text} for c in end.citations],
        "usage": usage,
        "issues": [dict(issue) for issue in (*response.issues, *end.issues)],
        "mode": response.metadata.get("mode"),
    }
    if end.error is not None:
        return sse_event({"error": end.error, **body}, "error")
    return sse_event(body, "done")
