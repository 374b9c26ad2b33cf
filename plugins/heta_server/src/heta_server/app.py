"""The ASGI application over loaded knowledge bases: ``create_app(kb, config, kbs={...})``.

Models load once (each knowledge base keeps its components open) and queries run
concurrently on uvicorn's event loop with the async API (``await kb.query``). Writes go
through each knowledge base's ``JobRunner``: one at a time, in the background, with
progress at ``GET /api/v1/jobs/{id}``.

The ``--kb`` knowledge base is served at ``/api/v1/...`` and, like every ``--kb-dir`` one, at
``/api/v1/kbs/{name}/...`` (``routes.py``: the same router twice). Every request runs as the
caller its token stands for (``tokens.py``; the ``Guard`` finds it).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, Response
from heta_framework.kb import KnowledgeBase

from heta_server.audit_file import attach_audit_log
from heta_server.chat import chat_routes
from heta_server.config import DEFAULT_KB, ServerConfig, ServerConfigError, check_kb_names
from heta_server.console import console_routes
from heta_server.console_static import PAGE_CSP, STATIC_FILES, static_bytes
from heta_server.errors import ApiError, install_error_handlers
from heta_server.guard import Guard
from heta_server.mcp_http import McpEndpoints
from heta_server.metrics import RequestMetrics, ServerMetrics
from heta_server.request_log import RequestLog
from heta_server.route_note import RouteNote
from heta_server.routes import api_routes, upload_name
from heta_server.tenants import Call, Tenants, caller_of
from heta_server.tokens import unknown_kbs
from heta_server.tracing_middleware import RequestTracing

__all__ = ["API", "create_app", "upload_name"]

API = "/api/v1"
#: the OpenAI-compatible endpoints (``chat.py``)
OPENAI_API = "/v1"


def create_app(
    kb: KnowledgeBase, config: ServerConfig | None = None, *, warm: bool = True, kbs: Mapping[str, KnowledgeBase] | None = None,
) -> FastAPI:
    """The app over ``kb`` and the named ``kbs`` (which the caller closes). ``warm``: load local models at start-up,
    not at the first query."""
    config = config or ServerConfig()
    check_kb_names(list(kbs or {}))
    tenants = Tenants({DEFAULT_KB: kb, **(kbs or {})})
    tokens = config.token_table()
    if tokens is not None and (unknown := unknown_kbs(tokens.callers, tenants.names)):
        raise ServerConfigError(
            f"The tokens file names knowledge base(s) {', '.join(map(repr, unknown))} this server does not serve; "
            f"it serves {', '.join(tenants.names)} (--kb is {DEFAULT_KB!r}, --kb-dir NAME=PATH adds more)."
        )

    mcp = McpEndpoints(tenants, host=config.host, writes=config.mcp_writes, audit_reads=config.audit_reads)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        detach = attach_audit_log(config.audit_log) if config.audit_log is not None else None
        try:
            if warm:
                for tenant in tenants:
                    await tenant.ready()
            async with mcp.running():
                yield
            for tenant in tenants:
                await tenant.jobs.wait_idle()  # a build in progress finishes (and commits) before the process exits
        finally:
            if detach is not None:
                detach()

    # no /docs or /redoc: FastAPI's pages load their scripts from a CDN, and the server works offline
    app = FastAPI(title="Heta", version="0.1.0", summary=f"Heta knowledge base at {kb.path}", lifespan=lifespan,
                  docs_url=None, redoc_url=None, **_without_native_telemetry())
    app.add_middleware(RouteNote)  # first added = innermost: it sees the route the router matched
    app.state.kb = kb
    app.state.tenants = tenants
    install_error_handlers(app, tenants.secrets())
    if config.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=list(config.cors_origins), allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    # added last = outermost: the token and size checks run before anything else, CORS preflights included
    app.add_middleware(Guard, tokens=tokens, max_body_bytes=config.max_body_bytes, max_upload_bytes=config.max_upload_bytes)
    if config.request_log:  # outside the Guard: refused requests are logged too
        app.add_middleware(RequestLog, log_queries=config.log_queries)
    # outermost: refused requests are traced and counted too (the route each one took is noted innermost)
    metrics = ServerMetrics(tenants)
    app.add_middleware(RequestTracing, served=tenants.names)
    app.add_middleware(RequestMetrics, metrics=metrics)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"status": "ok"}

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(static_bytes("index.html"), headers={"Content-Security-Policy": PAGE_CSP})

    @app.get("/static/{name:path}", include_in_schema=False)
    async def static_file(name: str) -> Response:
        if name not in STATIC_FILES:
            raise ApiError(404, "NotFound", f"No static file {name!r}.")
        return Response(static_bytes(name), media_type=STATIC_FILES[name])

    @app.get("/metrics", include_in_schema=False)
    async def metrics_text(request: Request) -> Response:
        """Prometheus' text format (heta_server/metrics.py); behind the token like the API, and showing only the
        knowledge bases the caller may use."""
        return Response(metrics.exposition(caller_of(request)), media_type=metrics.content_type)

    @app.get(f"{API}/kbs")
    async def knowledge_bases(request: Request) -> dict[str, Any]:
        """The knowledge bases the caller may use (no other name is ever shown to it)."""
        return {"kbs": [{"name": name, "default": name == DEFAULT_KB} for name in tenants.usable(caller_of(request))]}

    def default_kb(request: Request) -> Call:
        caller = caller_of(request)
        return Call(caller, tenants.get(DEFAULT_KB, caller))

    def named_kb(request: Request, kb_name: str) -> Call:
        caller = caller_of(request)
        return Call(caller, tenants.get(kb_name, caller))

    app.include_router(api_routes(default_kb, audit_reads=config.audit_reads), prefix=API)
    app.include_router(api_routes(named_kb, audit_reads=config.audit_reads), prefix=f"{API}/kbs/{{kb_name}}")
    # the console's own reads (console.py): the home summary, catalog pages, the graph a neighbourhood at a time
    app.include_router(console_routes(default_kb), prefix=API)
    app.include_router(console_routes(named_kb), prefix=f"{API}/kbs/{{kb_name}}")
    # chat front-ends (Open WebUI, any OpenAI client) take a base URL ending in /v1
    app.include_router(chat_routes(tenants, audit_reads=config.audit_reads), prefix=OPENAI_API)
    app.router.routes.extend(mcp.routes())
    return app


def _without_native_telemetry() -> dict[str, Any]:
    """FastAPI 0.16x traces, measures and logs requests itself once an OpenTelemetry SDK is installed: a second
    server span beside ours (tracing_middleware.py), ``url.path`` with document ids, and logs of validation
    failures that quote the request body, a query's text included. Turned off where FastAPI offers it."""
    if "telemetry" not in inspect.signature(FastAPI.__init__).parameters:
        return {}
    return {"telemetry": {"tracing": False, "metrics": False, "logs": False, "operation_spans": False}}
