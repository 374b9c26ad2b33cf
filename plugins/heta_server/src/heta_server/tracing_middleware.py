"""A span per HTTP request that continues the caller's trace: its ``traceparent`` header (W3C Trace Context).

A client that traces (an app calling ``heta serve``, a gateway) sees the server's work under its own span:
the request's span, then the query's or build's spans below it (``heta_framework.common.tracing``). With no
SDK installed the API makes no-op spans and this costs a header lookup.

The span is named by the route's template (``POST /api/v1/kbs/{kb_name}/query``) and carries the method,
the status, the knowledge base and the query mode: never the URL's query string, a header or the body.
"""

from __future__ import annotations

from typing import Any

from heta_framework.kb.tracing import continued_from, set_attributes, span

from heta_server.config import DEFAULT_KB
from heta_server.response_status import ResponseStatus
from heta_server.route_note import note_of, route_of


class RequestTracing:
    def __init__(self, app: Any, *, served: list[str]):
        self.app = app
        self.served = served

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope.get("headers", ())
                   if name.lower() in (b"traceparent", b"tracestate")}
        method = scope.get("method", "?")
        status = ResponseStatus(send, default=500)

        with continued_from(headers), span(method, {"http.request.method": method}) as current:
            try:
                await self.app(scope, receive, status)
            finally:
                if current.is_recording():
                    route, kb_name = route_of(scope, self.served, DEFAULT_KB)
                    holder = note_of(scope)
                    current.update_name(f"{method} {route}")
                    set_attributes(current, {
                        "http.route": route, "http.response.status_code": status.code, "heta.kb": kb_name,
                        "heta.query.mode": holder.get("mode"),
                    })
