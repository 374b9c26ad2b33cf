"""Which route answered a request, in its note: the template and the knowledge base, for /metrics and traces.

The router writes the matched route and its path parameters into the scope it routes with, a copy the
outer middlewares never see; this middleware sits innermost and copies them into the request's note (a
dict the copies share, ``request_log.NOTE_KEY``). The template has each parameter's value put back as its
name (``/api/v1/kbs/{kb_name}/documents/{document_id}``): a bounded label, whatever ids the clients send.
"""

from __future__ import annotations

from typing import Any

from heta_server.request_log import NOTE_KEY

UNKNOWN = "unknown"


class RouteNote:
    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        try:
            await self.app(scope, receive, send)
        finally:
            holder = scope.get(NOTE_KEY)
            if isinstance(holder, dict) and scope.get("route") is not None:
                params = scope.get("path_params") or {}
                holder["route"] = template(scope.get("path", ""), params)
                if "kb_name" in params:
                    holder["kb_name"] = str(params["kb_name"])


def template(path: str, params: dict[str, Any]) -> str:
    """``path`` with each path parameter's value replaced by ``{name}``: whole segments, or a run of them for a
    value with slashes (``{document_id:path}``)."""
    segments = path.split("/")
    for name, value in params.items():
        parts = str(value).split("/")
        if not str(value):
            continue
        for start in range(len(segments) - len(parts), -1, -1):  # from the right: ids come last
            if segments[start:start + len(parts)] == parts:
                segments[start:start + len(parts)] = [f"{{{name}}}"]
                break
    return "/".join(segments)


def note_of(scope: dict) -> dict[str, Any]:
    """The request's note (``request_log.NOTE_KEY``), or an empty one."""
    holder = scope.get(NOTE_KEY)
    return holder if isinstance(holder, dict) else {}


def route_of(scope: dict, served: list[str], default_kb: str) -> tuple[str, str | None]:
    """(route template, knowledge base) of an answered request: ``unknown`` for no route or a name not served,
    ``None`` outside ``/api/`` (the chat endpoints pick theirs by the body's model)."""
    holder = note_of(scope)
    route = holder.get("route")
    if route is None:
        return UNKNOWN, None
    if not route.startswith("/api/"):
        return route, None
    name = holder.get("kb_name", default_kb)
    return route, name if name in served else UNKNOWN
