"""``heta mcp``: one knowledge base's MCP server over stdio, for a desktop assistant or an IDE that starts it.

The process is its caller's: it runs as the principals given (``--as``, public documents only without),
and offers no write tools unless started with ``--allow-writes``. Standard output carries the protocol
only; logs go to standard error.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import anyio
from heta_framework.contracts.access import check_principals
from heta_framework.kb import KnowledgeBase

from heta_server.config import DEFAULT_KB
from heta_server.mcp_server import build_mcp_server
from heta_server.request_log import show_on_stderr
from heta_server.tenants import Call, Tenants
from heta_server.tokens import READ, RIGHTS, Caller

log = logging.getLogger(__name__)


def stdio_caller(principals: Sequence[str], *, allow_writes: bool) -> Caller:
    checked = check_principals(list(principals), what="--as") if principals else ()
    return Caller(actor=str(principals[0]) if checked else "mcp", principals=tuple(checked),
                  rights=frozenset(RIGHTS) if allow_writes else frozenset({READ}))


def run_stdio(kb_path: str | Path, *, principals: Sequence[str] = (), allow_writes: bool = False, warm: bool = True) -> None:
    caller = stdio_caller(principals, allow_writes=allow_writes)
    show_on_stderr("heta_server.tenants", "heta_server.warm")  # model loading is said, never silent (stdout is the protocol's)
    with KnowledgeBase.load(kb_path) as kb:
        tenant = Tenants({DEFAULT_KB: kb}).get(DEFAULT_KB, caller)
        server = build_mcp_server(tenant, lambda _context: Call(caller, tenant), writes=allow_writes)

        async def main() -> None:
            if warm:
                await tenant.ready()
            try:
                await server.run_stdio_async()
            finally:
                await tenant.jobs.wait_idle()  # a write under way commits before the process ends

        anyio.run(main)
