"""Server-Sent Events: one event's bytes, and a response that stops its producer when the client leaves.

Starlette's ``StreamingResponse`` watches for the client's disconnect only under ASGI servers that
speak spec 2.3 or older; under 2.4 it notices only at the next write, which for an answer waiting
on a slow model may be long after the client left. ``EventStream`` always watches: a client that
disconnects cancels the producer at once, and with it the language model's stream (whose HTTP
response is then closed, so the model server stops generating).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

#: no caching, and no buffering by a proxy in front (nginx holds a stream back without it)
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def sse_event(data: Any, event: str | None = None) -> bytes:
    """``event: NAME`` (when given) and one ``data:`` line of JSON (a ``str`` as it is), then the blank line."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


class EventStream(StreamingResponse):
    media_type = "text/event-stream"

    def __init__(self, content: Any, status_code: int = 200, headers: dict[str, str] | None = None):
        super().__init__(content, status_code=status_code, headers={**SSE_HEADERS, **(headers or {})}, media_type=self.media_type)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def produce() -> None:
                await self.stream_response(send)
                group.cancel_scope.cancel()  # done: stop listening

            group.start_soon(produce)
            await self.listen_for_disconnect(receive)
            group.cancel_scope.cancel()  # the client left: stop producing (and the model call under it)
