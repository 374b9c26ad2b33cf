"""The JSON the console's pages read beside the API (``/api/v1/console/...``), as a router mounted like ``api_routes``.

Searching, answers, uploads and removals use the API itself (``/query`` streamed, ``/search``,
``/documents/upload``, ``DELETE /documents/{id}``); this router adds what only the console needs: the home
page's summary, the catalog a page at a time, a document with its chunks, the graph a neighbourhood at a
time, and the latest evaluation. Every answer is the caller's view: documents, chunks and graph facts it
may not read are absent, and answered like unknown ones.

(No ``from __future__ import annotations``: FastAPI reads the ``Annotated`` dependencies at definition time.)
"""

import asyncio
import base64
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from heta_server.config import DEFAULT_KB
from heta_server.console_documents import ChunkCounts, catalog_page, document_view, removed_documents
from heta_server.console_eval import eval_chart, eval_report
from heta_server.console_graph import document_entities, entity_view, fact_evidence, graph_store, neighbourhood
from heta_server.console_summary import kb_summary
from heta_server.errors import ApiError
from heta_server.tenants import Call

#: the graph mode the explorer finds entities with (it filters by the caller's access like every query)
ENTITY_SEARCH_MODE = "heta_graph_search"


def console_routes(resolve: Callable[..., Call]) -> APIRouter:
    router = APIRouter(prefix="/console")
    counts = ChunkCounts()
    Reader = Annotated[Call, Depends(resolve)]

    @router.get("/summary")
    async def summary(call: Reader) -> dict[str, Any]:
        records = call.readable()
        name = call.tenant.name
        return await asyncio.to_thread(
            kb_summary, call.kb, name, call.scope(), records, counts, may_write=call.caller.may_write
        ) | {"default_kb": name == DEFAULT_KB}

    @router.get("/documents")
    async def documents(
        call: Reader, q: str = "", offset: Annotated[int, Query(ge=0)] = 0, limit: Annotated[int, Query(ge=1, le=200)] = 50,
    ) -> dict[str, Any]:
        records = call.readable()
        removed = removed_documents(call.kb, call.caller.principals)  # the ones the caller could read
        return await asyncio.to_thread(catalog_page, call.kb, records, counts, text=q, offset=offset, limit=limit, removed=removed)

    @router.get("/documents/{document_id:path}")
    async def document(
        document_id: str, call: Reader, offset: Annotated[int, Query(ge=0)] = 0, limit: Annotated[int, Query(ge=1, le=200)] = 50,
        chunk: str | None = None,
    ) -> dict[str, Any]:
        record = call.document(document_id)  # 404 for a document the caller may not read
        scope = call.scope()

        def view() -> dict[str, Any]:
            data = document_view(call.kb, record, offset=offset, limit=limit, chunk=chunk)
            try:
                data["entities"] = document_entities(graph_store(call.kb), record.id, scope)
            except ApiError:
                data["entities"] = []
            return data

        return await asyncio.to_thread(view)

    @router.get("/graph/entities")
    async def find_entities(call: Reader, q: str, limit: Annotated[int, Query(ge=1, le=50)] = 10) -> dict[str, Any]:
        graph_store(call.kb)
        await call.tenant.ready()
        response = await call.kb.query(q, mode=ENTITY_SEARCH_MODE, top_k=limit, principals=call.caller.principals)
        found: dict[str, dict[str, Any]] = {}
        for result in response.results:
            entity_id = result.metadata.get("entity_id")
            if result.kind == "entity" and entity_id and entity_id not in found:
                found[entity_id] = {"id": entity_id, "name": result.metadata.get("name", ""), "type": result.metadata.get("type", ""),
                                    "score": result.score}
        return {"entities": list(found.values())}

    @router.get("/graph/entity/{entity_id}")
    async def entity(
        entity_id: str, call: Reader, offset: Annotated[int, Query(ge=0)] = 0, limit: Annotated[int, Query(ge=1, le=100)] = 25,
    ) -> dict[str, Any]:
        graph, scope = graph_store(call.kb), call.scope()
        return await asyncio.to_thread(neighbourhood, graph, entity_id, scope, offset=offset, limit=limit)

    @router.get("/graph/entity/{entity_id}/summary")
    async def entity_only(entity_id: str, call: Reader) -> dict[str, Any]:
        graph, scope = graph_store(call.kb), call.scope()
        return await asyncio.to_thread(entity_view, graph, entity_id, scope)

    @router.get("/graph/evidence")
    async def evidence(call: Reader, kind: str, id: str, limit: Annotated[int, Query(ge=1, le=100)] = 20) -> dict[str, Any]:
        graph, scope = graph_store(call.kb), call.scope()
        names = {record.id: record.name for record in call.readable()}
        return await asyncio.to_thread(fact_evidence, graph, kind, id, scope, names, limit=limit)

    def whole_kb_reader(call: Call) -> bool:
        # an evaluation scores every document: shown only to callers that may read all of them
        return not call.scope().restricted

    @router.get("/eval")
    async def evaluation(call: Reader) -> dict[str, Any]:
        """The report, with its chart as a ``data:`` URL (an ``<img>`` cannot send the token)."""
        if not whole_kb_reader(call):
            return {"report": None, "hidden": True}
        report = await asyncio.to_thread(eval_report, call.kb.path)
        if report is not None:
            chart = await asyncio.to_thread(eval_chart, call.kb.path)
            report["chart"] = "data:image/png;base64," + base64.b64encode(chart).decode("ascii") if chart else None
        return {"report": report, "hidden": False}

    return router
