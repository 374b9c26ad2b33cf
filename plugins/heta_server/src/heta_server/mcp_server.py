"""Heta as a Model Context Protocol server (the official ``mcp`` SDK): the same server over stdio (``heta mcp``)
and streamable HTTP (``/mcp`` on ``heta serve``).

One ``MCPServer`` per knowledge base. Who calls is decided per request by ``resolve(context)``: over HTTP
the caller the request's bearer token stands for (the ``Guard`` checked it, exactly as for the REST API),
over stdio the one ``heta mcp`` was started as. Tools: ``search``, ``list_modes``, ``list_documents``,
``read_document``, and ``answer`` when the recipe has a language model; ``add_document`` and
``remove_document`` only when the server was started with writes allowed. Resources: each readable
document at ``heta://documents/{id}`` and the recipe summary at ``heta://recipe`` (secrets masked).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp_types import CallToolResult, ListResourcesResult, PaginatedRequestParams, TextContent, ToolAnnotations
from mcp_types import Resource as MCPResource
from pydantic import Field

from heta_server import mcp_tools
from heta_server.tenants import Call, Tenant

T = TypeVar("T")
Resolve = Callable[[Context], Call]

INSTRUCTIONS = (
    "Heta searches a knowledge base built from the user's documents. Use `search` to find passages (each with its "
    "document id and where it is), `read_document` to read a whole document page by page, `list_documents` to see what "
    "is there, and `answer` (when offered) for a grounded answer with [n] citations. `list_modes` says which search "
    "modes are built and why others are not. Cite document ids when you use what you found."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
DOCUMENT_URI = "heta://documents/"


#: documents listed per ``resources/list`` page
RESOURCES_PAGE = 500


class HetaMCPServer(MCPServer):
    """``resources/list`` also lists the documents the caller may read (``heta://documents/{id}``), a page at a time:
    the SDK lists only resources registered up front, and which documents exist depends on who asks."""

    def __init__(self, tenant: Tenant, resolve: Resolve, **settings: Any):
        super().__init__(**settings)
        self._tenant, self._resolve = tenant, resolve

    async def _handle_list_resources(self, ctx: Any, params: PaginatedRequestParams | None) -> ListResourcesResult:
        fixed = await self.list_resources()
        try:
            records = self._resolve(Context(request_context=ctx, mcp_server=self)).readable()
        except Exception:  # no caller: the fixed resources only (a tool call would say why)
            return ListResourcesResult(resources=fixed)
        start = int(params.cursor) if params is not None and params.cursor and params.cursor.isdigit() else 0
        page = records[start: start + RESOURCES_PAGE]
        documents = [MCPResource(uri=f"{DOCUMENT_URI}{record.id}", name=record.name or record.id, mime_type="text/plain",
                                 description=f"{record.source} ({record.state})") for record in page]
        more = start + len(page) < len(records)
        return ListResourcesResult(resources=(fixed if start == 0 else []) + documents, next_cursor=str(start + len(page)) if more else None)


def build_mcp_server(tenant: Tenant, resolve: Resolve, *, writes: bool, audit_reads: bool = False) -> MCPServer:
    server = HetaMCPServer(tenant, resolve, name="heta", title=f"Heta knowledge base {tenant.name}", instructions=INSTRUCTIONS,
                           version="0.1.0", log_level="WARNING")
    secrets = tenant.kb.secrets()

    async def run(context: Context, work: Callable[[Call], Awaitable[T] | T]) -> T:
        try:
            call = resolve(context)
            result = work(call)
            return await result if isinstance(result, Awaitable) else result
        except Exception as exc:  # every failure a tool error with the HTTP API's code; the session lives on
            # returned, not raised: a raised ToolError reaches the model prefixed with the SDK's own words
            text = str(mcp_tools.failure(exc, secrets))
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)  # type: ignore[return-value]

    @server.tool(annotations=READ_ONLY)
    async def search(
        context: Context,
        query: Annotated[str, Field(description="What to look for, in words (a question or key words).", min_length=1)],
        mode: Annotated[str | None, Field(description="A query mode from list_modes; leave out for the best available one.")] = None,
        top_k: Annotated[int, Field(description="How many results.", ge=1, le=100)] = 10,
        filters: Annotated[dict[str, Any] | None, Field(description="Metadata filters, e.g. {\"document_id\": \"a\"}.")] = None,
        options: Annotated[dict[str, Any] | None, Field(description="The mode's options (docs/query-modes.md).")] = None,
    ) -> dict[str, Any]:
        """Search the knowledge base. Returns the ranked passages with their document id, where they are and their text."""
        return await run(context, lambda call: mcp_tools.search(call, query, mode, top_k, filters or {}, options or {},
                                                                audit_reads=audit_reads))

    @server.tool(annotations=READ_ONLY)
    async def list_modes(context: Context) -> dict[str, Any]:
        """The query modes: which are available, and for the others why not (a missing build step or plugin) and what to install."""
        return await run(context, mcp_tools.list_modes)

    @server.tool(annotations=READ_ONLY)
    async def list_documents(
        context: Context,
        offset: Annotated[int, Field(description="Skip this many documents (from next_offset).", ge=0)] = 0,
        limit: Annotated[int, Field(description="At most this many.", ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        """The documents you may read: id, name, source, state, size, metadata; page with offset and next_offset."""
        return await run(context, lambda call: mcp_tools.list_documents(call, offset, limit, audit_reads=audit_reads))

    @server.tool(annotations=READ_ONLY)
    async def read_document(
        context: Context,
        document_id: Annotated[str, Field(description="The document's id (from search or list_documents).", min_length=1)],
        offset: Annotated[int, Field(description="The character to start at (from next_offset).", ge=0)] = 0,
        max_chars: Annotated[int, Field(description="At most this many characters.", ge=1, le=mcp_tools.MAX_PAGE_CHARS)] = 8000,
    ) -> dict[str, Any]:
        """A document's parsed text, a page at a time, with its name, source, metadata and pages; next_offset reads on."""
        return await run(context, lambda call: mcp_tools.read_document(call, document_id, offset, max_chars, audit_reads=audit_reads))

    if tenant.kb.has_component("models.language"):

        @server.tool(annotations=READ_ONLY)
        async def answer(
            context: Context,
            question: Annotated[str, Field(description="The question to answer from the knowledge base.", min_length=1)],
            mode: Annotated[str | None, Field(description="A query mode from list_modes; leave out for the best available one.")] = None,
            top_k: Annotated[int, Field(description="How many passages the answer may draw on.", ge=1, le=50)] = 8,
            filters: Annotated[dict[str, Any] | None, Field(description="Metadata filters, e.g. {\"document_id\": \"a\"}.")] = None,
        ) -> dict[str, Any]:
            """A grounded answer written by the knowledge base's language model from what search finds, with [n] citations
            naming the documents. Says so when the passages do not answer the question."""
            return await run(context, lambda call: mcp_tools.answer(call, question, mode, top_k, filters or {}, audit_reads=audit_reads))

    if writes:

        @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False))
        async def add_document(
            context: Context,
            text: Annotated[str, Field(description="The document's text (Markdown or plain).", min_length=1)],
            document_id: Annotated[str | None, Field(description="Its id; the same id replaces that document. Default: a hash of the text.")] = None,
            name: Annotated[str, Field(description="A file name; its extension picks the parser.")] = "document.md",
            metadata: Annotated[dict[str, Any] | None, Field(description="Metadata to keep with it (filterable).")] = None,
            access: Annotated[list[str] | None, Field(description="Who may read it (principals, or [\"public\"]); default: the recipe's.")] = None,
        ) -> dict[str, Any]:
            """Add (or replace) a document and build it into the knowledge base; returns the finished job."""
            return await run(context, lambda call: mcp_tools.add_document(call, text, document_id, name, metadata or {}, access))

        @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False))
        async def remove_document(
            context: Context,
            document_id: Annotated[str, Field(description="The id of the document to remove.", min_length=1)],
        ) -> dict[str, Any]:
            """Remove a document and everything built from it; returns the finished job."""
            return await run(context, lambda call: mcp_tools.remove_document(call, document_id))

    @server.resource(DOCUMENT_URI + "{document_id}", name="document", mime_type="text/plain",
                     description="A document's parsed text (the first 20,000 characters; read_document pages through the rest).")
    async def document(document_id: str, context: Context) -> str:
        try:
            page = mcp_tools.read_document(resolve(context), document_id, 0, mcp_tools.MAX_PAGE_CHARS, audit_reads=audit_reads)
        except Exception as exc:
            raise ResourceError(str(mcp_tools.failure(exc, secrets))) from None
        return str(page["text"])

    @server.resource("heta://recipe", name="recipe", mime_type="application/json",
                     description="The knowledge base's recipe: models, stores, steps (secrets masked).")
    def recipe() -> str:
        return json.dumps(tenant.kb.recipe.summary(), ensure_ascii=False, default=str)

    return server
