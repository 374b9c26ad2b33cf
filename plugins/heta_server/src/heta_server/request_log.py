"""One log line per request: method, path, status, time, and the query mode when there was one.

``heta.requests`` at INFO, e.g. ``POST /api/v1/query 200 84.1 ms mode=hybrid_search``. Never the token
(headers are not read here) nor the query string; the query's own text only with ``--log-queries``.
A streamed answer is logged when its stream ends, with the whole time. A request whose knowledge base
first had to load its models says so (``models_loaded=8.2s``), so a slow first answer is not a mystery.

Endpoints add what they know to the request's note (``note(request, mode=...)``): a dict in the ASGI
scope, shared by reference, so it reaches this middleware through the scope copies further in.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from heta_server.response_status import ResponseStatus

REQUEST_LOGGER = "heta.requests"
log = logging.getLogger(REQUEST_LOGGER)

NOTE_KEY = "heta.request_note"


def note(scope_holder: Any, **fields: Any) -> None:
    """Record ``fields`` (``mode``, ``query``, ``models_loaded``) for this request's log line; a request or a scope."""
    scope = getattr(scope_holder, "scope", scope_holder)
    holder = scope.get(NOTE_KEY) if isinstance(scope, dict) else None
    if isinstance(holder, dict):
        holder.update({name: value for name, value in fields.items() if value is not None})


class RequestLog:
    def __init__(self, app: Any, *, log_queries: bool = False):
        self.app = app
        self.log_queries = log_queries

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not log.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        # shared with the metrics middleware outside, when it made one: endpoints note once for both
        holder: dict[str, Any] = scope[NOTE_KEY] if isinstance(scope.get(NOTE_KEY), dict) else {}
        status = ResponseStatus(send, default=0)  # 0: printed "-", no response was sent

        try:
            await self.app({**scope, NOTE_KEY: holder}, receive, status)
        finally:
            log.info("%s", self.line(scope, status.code, (time.perf_counter() - started) * 1000, holder))

    def line(self, scope: dict, status: int, ms: float, holder: dict[str, Any]) -> str:
        parts = [scope.get("method", "?"), scope.get("path", "?"), str(status or "-"), f"{ms:.1f} ms"]
        if holder.get("mode"):
            parts.append(f"mode={holder['mode']}")
        if holder.get("models_loaded") is not None:
            parts.append(f"models_loaded={holder['models_loaded']:.1f}s")
        if self.log_queries and holder.get("query") is not None:
            parts.append(f"query={str(holder['query'])[:200]!r}")
        return " ".join(parts)


def show_on_stderr(*names: str) -> None:
    """Send these loggers' INFO lines to stderr whatever the root logger's level (the CLI's is WARNING)."""
    for name in names:
        logger = logging.getLogger(name)
        logger.setLevel(logging.INFO)
        if not logger.handlers:
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("%(asctime)s %(name)s: %(message)s"))
            logger.addHandler(handler)
            logger.propagate = False
