"""``/mcp`` on ``heta serve``: the MCP server of each knowledge base over streamable HTTP.

``/mcp`` is the ``--kb`` knowledge base, ``/mcp/{name}`` a ``--kb-dir`` one. The ``Guard`` in front
checks the bearer token as for every API path, and a knowledge base the token may not use answers
404 ``UnknownKnowledgeBase``, as in the REST API. Sessions are stateless (every request stands alone
and runs as the caller of its own token), so a token can never ride on a session another one opened.

On a loopback server the SDK's DNS-rebinding guard is on (a web page cannot reach ``/mcp`` through a
name that resolves to 127.0.0.1); an exposed server needs a token, which a page cannot send.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from starlette.routing import Route

from heta_server.config import DEFAULT_KB, is_loopback
from heta_server.errors import ApiError
from heta_server.mcp_server import build_mcp_server
from heta_server.tenants import CALLER_KEY, Call, Tenant, Tenants
from heta_server.tokens import Caller

PATH = "/mcp"


class McpEndpoints:
    def __init__(self, tenants: Tenants, *, host: str, writes: bool, audit_reads: bool):
        self.tenants = tenants
        self.servers: dict[str, MCPServer] = {}
        for tenant in tenants:
            server = build_mcp_server(tenant, _http_caller(tenant), writes=writes, audit_reads=audit_reads)
            # builds the session manager (its Starlette app is not used: the routes below call the manager)
            server.streamable_http_app(stateless_http=True, json_response=True, host=host if is_loopback(host) else "0.0.0.0")
            self.servers[tenant.name] = server

    def routes(self) -> list[Route]:
        methods = ["GET", "POST", "DELETE"]
        # an object, not a function: Starlette hands a function a Request, and an ASGI app its scope, receive, send
        endpoint = _Asgi(self)
        return [Route(PATH, endpoint=endpoint, methods=methods), Route(f"{PATH}/{{kb_name}}", endpoint=endpoint, methods=methods)]

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for server in self.servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    async def handle(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        name = scope.get("path_params", {}).get("kb_name", DEFAULT_KB)
        caller = scope.get(CALLER_KEY)
        if not isinstance(caller, Caller):
            raise ApiError(401, "Unauthorized", "This request carries no caller.")
        self.tenants.get(name, caller)  # 404 UnknownKnowledgeBase, as the REST API answers
        await self.servers[name].session_manager.handle_request(scope, receive, send)


class _Asgi:
    def __init__(self, endpoints: McpEndpoints):
        self.endpoints = endpoints

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self.endpoints.handle(scope, receive, send)


def _http_caller(tenant: Tenant) -> Any:
    def resolve(context: Context) -> Call:
        request = context.request_context.request
        caller = getattr(request, "scope", {}).get(CALLER_KEY) if request is not None else None
        if not isinstance(caller, Caller) or not caller.may_use(tenant.name):  # checked at the route too; never guess
            raise ApiError(401, "Unauthorized", "This request carries no caller for this knowledge base.")
        return Call(caller, tenant)

    return resolve
