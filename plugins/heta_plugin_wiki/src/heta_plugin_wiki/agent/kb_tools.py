"""``agent_search``'s tools: the knowledge base's own modes and stores, each call under the caller's scope.

search          any available mode that needs no language model (the tools must stay cheap and cannot call an agent)
read_document   a document's chunks in order
read_around     the chunks before and after a chunk a tool returned
graph_neighbours the relations of a graph entity (only when the graph tables exist), each resting only on documents
                the caller may read
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heta_framework.common.models import ToolSpec
from heta_framework.common.threads import in_thread
from heta_framework.kb.documents import document_chunks
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResult, chunk_result

from heta_plugin_wiki.access import all_readable, readable
from heta_plugin_wiki.agent.ledger import Ledger
from heta_plugin_wiki.agent.options import AgentOptions
from heta_plugin_wiki.agent.tools import Tool, ToolError, ToolOutput, object_schema

LANGUAGE_KEY = "models.language"
#: the most chunks read_document returns (a long document is read from a chunk onwards with read_around)
DOCUMENT_CHUNKS = 20


def searchable_modes(context: QueryContext) -> list[str]:
    """Available modes the agent may search with: not on the call stack (no agent calls an agent) and needing no
    language model (a search tool answering with a model would spend the budget twice)."""
    registry = getattr(context.knowledge_base, "query_engines", None)
    modes = []
    for mode in context.knowledge_base.available_queries:
        if mode in context.stack:
            continue
        engine = registry.get(mode) if registry is not None else None
        needs = {ref.key for ref in getattr(engine, "required_components", ())}
        if LANGUAGE_KEY in needs:
            continue
        modes.append(mode)
    return sorted(modes)


def kb_tools(request: QueryRequest, context: QueryContext, options: AgentOptions, ledger: Ledger) -> list[Tool]:
    modes = searchable_modes(context)
    objects = context.store("objects")

    async def search(arguments: Mapping[str, Any]) -> ToolOutput:
        response = await context.query(arguments["query"], mode=arguments["mode"], top_k=options.tool_top_k)
        return ToolOutput(response.results)

    async def read_document(arguments: Mapping[str, Any]) -> ToolOutput:
        document_id = arguments["document_id"]
        chunks = await in_thread(document_chunks, objects, document_id) if readable(request, document_id) else []
        if not chunks:  # the same words whether it is hidden or absent: a refusal must not confirm it exists
            raise ToolError(f"no readable document {document_id!r}")
        shown = chunks[:DOCUMENT_CHUNKS]
        note = f"The first {len(shown)} of {len(chunks)} chunks; read_around a later chunk for more." if len(chunks) > len(shown) else ""
        return ToolOutput(tuple(chunk_result(c, 1.0, "read_document") for c in shown), note)

    async def read_around(arguments: Mapping[str, Any]) -> ToolOutput:
        chunk_id, window = arguments["chunk_id"], min(max(int(arguments.get("window", 1)), 1), 5)
        hit = ledger.get(chunk_id) if chunk_id in ledger else None
        if hit is None or hit.kind != "chunk" or not readable(request, hit.document_id):
            raise ToolError(f"{chunk_id!r} is not a chunk a tool returned; search first")
        chunks = await in_thread(document_chunks, objects, hit.document_id)
        place = next((i for i, c in enumerate(chunks) if c.id == chunk_id), None)
        if place is None:
            raise ToolError(f"the chunk {chunk_id!r} is no longer stored")
        around = chunks[max(0, place - window): place + window + 1]
        return ToolOutput(tuple(chunk_result(c, 1.0, "read_around") for c in around))

    tools = [
        Tool(ToolSpec("search", "Search the knowledge base with one of its modes. Returns results with ids.",
                      object_schema({"query": {"type": "string", "description": "what to look for"},
                                     "mode": {"type": "string", "enum": modes, "description": "the search mode"}},
                                    ["query", "mode"])), search),
        Tool(ToolSpec("read_document", "Read a document's text, chunk by chunk, by its document_id.",
                      object_schema({"document_id": {"type": "string"}}, ["document_id"])), read_document),
        Tool(ToolSpec("read_around", "Read the chunks before and after a chunk that a tool returned.",
                      object_schema({"chunk_id": {"type": "string"}, "window": {"type": "integer", "description": "chunks each side, 1-5"}},
                                    ["chunk_id"])), read_around),
    ]
    if context.has_component("stores.graph") and "heta_graph_search" in context.knowledge_base.available_queries:
        tools.append(_graph_neighbours(request, context))
    return tools


def _graph_neighbours(request: QueryRequest, context: QueryContext) -> Tool:
    graph = context.store("graph")

    def neighbours(entity_id: str) -> list[QueryResult]:
        entity_evidence = graph.evidence("entity", [entity_id]).get(entity_id, [])
        if not any(readable(request, row[1]) for row in entity_evidence):
            raise ToolError(f"no readable entity {entity_id!r}")
        relations = graph.relations_touching([entity_id])
        evidence = graph.evidence("relation", [r.id for r in relations])
        # a relation is shown only when every document it rests on is readable: its description may say what each says
        shown = [r for r in relations if all_readable(request, {row[1] for row in evidence.get(r.id, [])})]
        names = {e.id: e.name for e in graph.get_entities(sorted({r.source_id for r in shown} | {r.target_id for r in shown})).values()}
        results = []
        for relation in shown:
            rows = evidence[relation.id]
            text = (f"{names.get(relation.source_id, relation.source_id)} -[{relation.name or relation.type}]-> "
                    f"{names.get(relation.target_id, relation.target_id)}: {relation.description}")
            results.append(QueryResult(
                id=f"relation:{relation.id}", text=text, score=1.0, kind="relation",
                metadata={"document_ids": sorted({row[1] for row in rows}), "source_id": relation.source_id,
                          "target_id": relation.target_id},
                sources=("graph_neighbours",),
            ))
        return results

    async def run(arguments: Mapping[str, Any]) -> ToolOutput:
        entity_id = arguments["entity_id"].removeprefix("entity:")
        return ToolOutput(tuple(await in_thread(neighbours, entity_id)))

    spec = ToolSpec("graph_neighbours", "The relations of a graph entity (an id like entity:... from a graph search).",
                    object_schema({"entity_id": {"type": "string"}}, ["entity_id"]))
    return Tool(spec, run)
