"""``wiki_agent_search``'s tools, upstream's four: read the wiki index, search the wiki, read a page, read a page's
raw source. Every one answers for the caller: the index and a page's links list readable pages only, and a page or
source the caller may not read is refused in the same words as one that does not exist."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heta_framework.common.models import ToolSpec
from heta_framework.common.threads import in_thread
from heta_framework.kb.documents import document_chunks
from heta_framework.kb.search import QueryContext, QueryRequest, chunk_result

from heta_plugin_wiki.access import readable
from heta_plugin_wiki.agent.ledger import Ledger
from heta_plugin_wiki.agent.options import AgentOptions
from heta_plugin_wiki.agent.tools import Tool, ToolError, ToolOutput, object_schema
from heta_plugin_wiki.wiki import persist
from heta_plugin_wiki.wiki.engines import section_result
from heta_plugin_wiki.wiki.render import index_markdown
from heta_plugin_wiki.wiki.steps import sections_of_page

WIKI_MODES = ("wiki_hybrid_search", "wiki_vector_search", "wiki_full_text_search")
SOURCE_CHUNKS = 20


def wiki_tools(request: QueryRequest, context: QueryContext, options: AgentOptions, ledger: Ledger) -> list[Tool]:
    objects = context.store("objects")
    modes = [m for m in WIKI_MODES if m in context.knowledge_base.available_queries]

    def may_read(document_id: str) -> bool:
        return readable(request, document_id)

    async def read_wiki_index(arguments: Mapping[str, Any]) -> ToolOutput:
        index = await in_thread(persist.load_index, objects)
        return ToolOutput(note=index_markdown(index, may_read))

    async def search_wiki(arguments: Mapping[str, Any]) -> ToolOutput:
        mode = arguments.get("mode") or modes[0]
        response = await context.query(arguments["query"], mode=mode, top_k=options.tool_top_k)
        return ToolOutput(response.results)

    async def read_page(arguments: Mapping[str, Any]) -> ToolOutput:
        document_id = persist.document_of_page(arguments["page_id"])
        page = await in_thread(persist.load_page, objects, document_id) if may_read(document_id) else None
        if page is None:
            raise ToolError(f"no readable page {arguments['page_id']!r}")
        index = await in_thread(persist.load_index, objects)
        related = [d for d in index.get(document_id, {}).get("related", []) if d in index and may_read(d)]
        note = "Related pages: " + ", ".join(f"{persist.page_id(d)} ({index[d]['title']})" for d in related) if related else ""
        return ToolOutput(tuple(section_result(s, s["id"], 1.0, "read_page") for s in sections_of_page(page)), note)

    async def read_source(arguments: Mapping[str, Any]) -> ToolOutput:
        document_id = persist.document_of_page(arguments["document_id"])
        chunks = await in_thread(document_chunks, objects, document_id) if may_read(document_id) else []
        if not chunks:
            raise ToolError(f"no readable document {arguments['document_id']!r}")
        return ToolOutput(tuple(chunk_result(c, 1.0, "read_source") for c in chunks[:SOURCE_CHUNKS]))

    return [
        Tool(ToolSpec("read_wiki_index", "List every wiki page: its id, title and a short summary.", object_schema({}, [])),
             read_wiki_index),
        Tool(ToolSpec("search_wiki", "Search the wiki pages' sections.",
                      object_schema({"query": {"type": "string"}, "mode": {"type": "string", "enum": modes}}, ["query"])), search_wiki),
        Tool(ToolSpec("read_page", "Read a wiki page (id wiki:<document id>): its summary and sections, and related pages.",
                      object_schema({"page_id": {"type": "string"}}, ["page_id"])), read_page),
        Tool(ToolSpec("read_source", "Read the raw source document a page was written from, by its document_id.",
                      object_schema({"document_id": {"type": "string"}}, ["document_id"])), read_source),
    ]
