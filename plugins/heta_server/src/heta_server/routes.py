"""The API of one knowledge base, as a router mounted twice: at /api/v1 (the ``--kb`` one) and /api/v1/kbs/{kb_name}.

Every endpoint runs as its caller (``Call``): queries carry the token's principals, document listings show
only what they may read, writes need the ``write`` right and name the caller in the audit log.

(No ``from __future__ import annotations`` here: FastAPI reads the ``Annotated`` dependencies of the
endpoints below at definition time, and they name functions local to ``api_routes``.)
"""

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Annotated, Any

import attrs
from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from fastapi.responses import Response
from heta_framework.cli.querying import mode_rows
from heta_framework.common.audit import audit
from heta_framework.contracts.access import check_principals
from heta_framework.contracts.documents import content_hash
from heta_framework.errors import KnowledgeBaseLockedError
from heta_framework.kb import KnowledgeBase
from heta_framework.kb.documents import SourceDocument, check_document_id

from heta_server.errors import ApiError
from heta_server.jobs import Job
from heta_server.memory_engine import MODE as MEMORY_MODE
from heta_server.metadata import document_metadata
from heta_server.query_stream import query_event_stream
from heta_server.request_log import note
from heta_server.schemas import AccessBody, AddDocumentsBody, QueryBody, RemoveDocumentsBody, SearchBody
from heta_server.tenants import Call

SEARCH_OPTIONS = ("weight_recency", "weight_importance", "weight_relevance", "tags", "rerank", "related", "update_access")


def api_routes(resolve: Callable[..., Call], *, audit_reads: bool) -> APIRouter:
    """The endpoints over the knowledge base ``resolve`` picks for a request (and refuses, 404, to a caller it is not for)."""
    router = APIRouter()

    def writing(call: Annotated[Call, Depends(resolve)]) -> Call:
        if not call.caller.may_write:
            raise ApiError(403, "Forbidden", "This token may only read; adding, changing or removing documents needs a token with the write right.")
        return call

    Reader = Annotated[Call, Depends(resolve)]
    Writer = Annotated[Call, Depends(writing)]

    def read(call: Call, operation: str, **details: Any) -> None:
        if audit_reads:
            audit(operation, call.actor, call.kb.path, **details)

    @router.get("/usage")
    async def usage(call: Reader) -> dict[str, Any]:
        """The knowledge base's model calls, tokens and cost since this server opened it (``kb.usage_totals``)."""
        return {"usage": call.kb.usage_totals}

    @router.get("/modes")
    async def modes(call: Reader) -> dict[str, Any]:
        return {"modes": mode_rows(call.kb)}

    async def prepare(request: Request, call: Call, mode: str | None, text: str) -> None:
        note(request, mode=mode, query=text, models_loaded=await call.tenant.ready())

    @router.post("/query")
    async def query(body: QueryBody, call: Reader, request: Request) -> Response:
        await prepare(request, call, body.mode, body.text)
        if body.stream:
            return await _streamed_query(body, call, request)
        options = {**body.options, **({"answer": True} if body.answer else {})}
        response = await call.kb.query(body.text, mode=body.mode, top_k=body.top_k, filters=body.filters, options=options,
                                       trace=body.trace, principals=call.caller.principals)
        note(request, mode=response.metadata.get("mode"))
        read(call, "query", mode=response.metadata.get("mode"), documents=_document_ids(response.results))
        return _json(response.to_dict())

    async def _streamed_query(body: QueryBody, call: Call, request: Request) -> Response:
        # the answer is written by the stream, piece by piece: the query itself only retrieves
        options = {name: value for name, value in body.options.items() if name != "answer"}
        started = time.perf_counter()
        response = await call.kb.query(body.text, mode=body.mode, top_k=body.top_k, filters=body.filters, options=options,
                                       trace=body.trace, principals=call.caller.principals)
        retrieval_ms = (time.perf_counter() - started) * 1000
        note(request, mode=response.metadata.get("mode"))
        read(call, "query", mode=response.metadata.get("mode"), documents=_document_ids(response.results))
        wanted = body.answer or bool(body.options.get("answer"))
        return query_event_stream(call.kb, body.text, response, wanted=wanted, retrieval_ms=retrieval_ms, started=started)

    @router.post("/search")
    async def search(body: SearchBody, call: Reader, request: Request) -> Response:
        await prepare(request, call, MEMORY_MODE, body.query)
        options = {name: getattr(body, name) for name in SEARCH_OPTIONS if getattr(body, name) is not None}
        response = await call.kb.query(body.query, mode=MEMORY_MODE, top_k=body.top_k, filters=body.filters, options=options,
                                       principals=call.caller.principals)
        read(call, "search", mode=MEMORY_MODE, documents=_document_ids(response.results))
        return _json({
            "results": [_memory_result(result) for result in response.results],
            "related": list(response.metadata.get("related", [])),
            "issues": response.issues,
            "ranking": response.metadata.get("ranking"),
        })

    @router.get("/documents")
    async def documents(call: Reader) -> dict[str, Any]:
        records = call.readable()
        read(call, "list_documents", documents=len(records))
        return {"documents": [_record(call.kb, record) for record in records]}

    @router.get("/documents/{document_id:path}")
    async def document(document_id: str, call: Reader) -> dict[str, Any]:
        record = call.document(document_id)
        read(call, "read_document", documents=[document_id])
        return _record(call.kb, record)

    @router.post("/documents", status_code=202)
    async def add_documents(body: AddDocumentsBody, call: Writer) -> dict[str, Any]:
        for document in body.documents:  # a bad id is the request's fault: 422 now, not a failed job later
            if document.id is not None:
                check_document_id(document.id)
        sources = [
            _with_id(SourceDocument(text=d.text, id=d.id, name=d.name, metadata=document_metadata(d.metadata, d.importance, d.tags),
                                    access=d.access))
            for d in body.documents
        ]
        ids = [str(source.id) for source in sources]
        call.check_writable(ids)
        return {"job": (await _start(call, "build", _build(call, sources), ids)).to_dict()}

    @router.post("/documents/upload", status_code=202)
    async def upload_document(
        call: Writer,
        file: UploadFile = File(...),
        id: str | None = Form(None),
        importance: float | None = Form(None),
        tags: str | None = Form(None, description="comma-separated"),
        metadata: str | None = Form(None, description="a JSON object"),
        access: Annotated[list[str] | None, Form(description="who may read it: one field per principal (default: the recipe's)")] = None,
    ) -> dict[str, Any]:
        extra = _json_object(metadata)
        tag_list = [t.strip() for t in tags.split(",") if t.strip()] if tags is not None else None
        # the client's file name, without any folders it names ("/etc/passwd" is "passwd"): it becomes the
        # document's name and source, and the server's disk layout is none of the client's business
        name = upload_name(file.filename)
        check_document_id(id or name)
        call.check_writable([id or name])
        source = SourceDocument(data=await file.read(), id=id or name, name=name, metadata=document_metadata(extra, importance, tag_list),
                                access=access)
        return {"job": (await _start(call, "build", _build(call, [source]), [source.id])).to_dict()}

    @router.put("/documents/{document_id:path}/access")
    async def set_access(document_id: str, body: AccessBody, call: Writer) -> dict[str, Any]:
        call.document(document_id)  # a document the caller may not read is unknown to it
        access = None if body.access is None else check_principals(body.access, what="access")
        call.tenant.jobs.check_idle()
        _check_no_other_writer(call)
        # on the event loop, not a thread: the catalog changes between two queries, never under one
        call.kb.set_access([document_id], access, actor=call.actor)
        return _record(call.kb, call.kb.document(document_id))

    @router.delete("/documents/{document_id:path}", status_code=202)
    async def remove_document(document_id: str, call: Writer) -> dict[str, Any]:
        call.document(document_id)
        return {"job": (await _start(call, "remove", _remove(call, [document_id]), [document_id])).to_dict()}

    @router.post("/documents/remove", status_code=202)
    async def remove_documents(body: RemoveDocumentsBody, call: Writer) -> dict[str, Any]:
        for document_id in body.ids:  # unknown and unreadable ids alike: 404 before any job
            call.document(document_id)
        return {"job": (await _start(call, "remove", _remove(call, list(body.ids)), list(body.ids))).to_dict()}

    @router.get("/jobs/{job_id}")
    async def job(job_id: str, call: Writer) -> dict[str, Any]:
        return {"job": await asyncio.to_thread(call.tenant.jobs.get, job_id)}

    return router


def _check_no_other_writer(call: Call) -> None:
    if call.kb.state.writer_active() and call.tenant.jobs.running() is None:
        raise KnowledgeBaseLockedError(
            f"Another process is writing the knowledge base at {call.kb.path} (a `heta build` or remove); "
            "retry when it has finished."
        )


async def _start(call: Call, kind: str, work: Any, documents: list[str]) -> Job:
    _check_no_other_writer(call)
    return await call.tenant.jobs.start(kind, work, documents)


def upload_name(filename: str | None) -> str:
    """An uploaded file's base name (either kind of slash), or ``document.txt`` when it has none."""
    return PurePosixPath((filename or "").replace("\\", "/")).name.strip() or "document.txt"


def _with_id(source: SourceDocument) -> SourceDocument:
    """A text document's id fixed here, as the build would give it (a hash of its content), so that the
    writer's right to write over that id is checked before the job starts."""
    return source if source.id is not None else attrs.evolve(source, id=content_hash(source.content())[:16])


def _build(call: Call, sources: list[SourceDocument]) -> Any:
    kb, actor = call.kb, call.actor

    async def work(job: Job) -> dict[str, Any]:
        report = await kb.build(sources, progress=job.progress, actor=actor)
        return report.to_dict()

    return work


def _remove(call: Call, ids: list[str]) -> Any:
    kb, actor = call.kb, call.actor

    async def work(job: Job) -> dict[str, Any]:
        removed = await kb.delete_documents(ids, actor=actor)
        return {"removed": [record.id for record in removed]}

    return work


def _document_ids(results: Any) -> list[str]:
    return sorted({result.document_id for result in results if result.document_id})


def _json(data: Any) -> Response:
    """JSON as ``heta query --json`` prints it, skipping FastAPI's ``jsonable_encoder``, which walks every field
    of every result again although ``to_dict()`` is JSON already."""
    return Response(json.dumps(data, ensure_ascii=False, default=str), media_type="application/json")


def _json_object(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        raise ApiError(422, "InvalidRequest", "metadata must be a JSON object, e.g. {\"author\": \"Ada\"}.") from None
    if not isinstance(value, dict):
        raise ApiError(422, "InvalidRequest", "metadata must be a JSON object, e.g. {\"author\": \"Ada\"}.")
    return value


def _record(kb: KnowledgeBase, record: Any) -> dict[str, Any]:
    return {
        "id": record.id, "source": record.source, "name": record.name, "state": record.state, "size": record.size,
        "metadata": dict(record.metadata), "added": record.added, "updated": record.updated,
        "access": None if record.access is None else list(record.access), "readers": list(kb.readers(record.id)),
    }


def _memory_result(result: Any) -> dict[str, Any]:
    """One Hebb ``results[]`` entry: the memory (chunk) and its three scores."""
    metadata = dict(result.metadata)
    scores = {name: metadata.pop(name, None) for name in ("recency_score", "importance_score_normalized", "relevance_score")}
    return {
        "memory": {
            "id": result.id,
            "content": result.text,
            "document_id": result.document_id,
            "source": metadata.get("source"),
            "location": result.location,  # as `heta query` and /query say it: file, page, sheet and rows
            "importance": metadata.get("importance"),
            "tags": metadata.get("tags"),
            "last_access": metadata.pop("last_access", None),
            "metadata": metadata,
        },
        "score": result.score,
        **scores,
        "sources": list(result.sources),
    }
