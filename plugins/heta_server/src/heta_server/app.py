"""The ASGI application over one loaded knowledge base: ``create_app(kb, config)``.

Models load once (the knowledge base keeps its components open) and queries run
concurrently on uvicorn's event loop with the async API (``await kb.query``). Writes go
through ``JobRunner``: one at a time, in the background, with progress at
``GET /api/v1/jobs/{id}``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

from fastapi import FastAPI, File, Form, UploadFile
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import HTMLResponse, Response
from heta_framework.cli.querying import mode_rows
from heta_framework.errors import KnowledgeBaseLockedError
from heta_framework.kb import KnowledgeBase
from heta_framework.kb.documents import SourceDocument, check_document_id

from heta_server.config import ServerConfig
from heta_server.errors import ApiError, install_error_handlers
from heta_server.guard import Guard
from heta_server.jobs import Job, JobRecords, JobRunner
from heta_server.memory_engine import MODE as MEMORY_MODE
from heta_server.metadata import document_metadata
from heta_server.schemas import AddDocumentsBody, QueryBody, RemoveDocumentsBody, SearchBody
from heta_server.warm import warm_up

API = "/api/v1"
SEARCH_OPTIONS = ("weight_recency", "weight_importance", "weight_relevance", "tags", "rerank", "related", "update_access")


def create_app(kb: KnowledgeBase, config: ServerConfig | None = None, *, warm: bool = True) -> FastAPI:
    """The app over ``kb`` (which the caller closes). ``warm``: load local models at start-up, not at the first query."""
    config = config or ServerConfig()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if warm:
            await warm_up(kb)
        yield
        await jobs.wait_idle()  # a build in progress finishes (and commits) before the process exits

    # no /docs or /redoc: FastAPI's pages load their scripts from a CDN, and the server works offline
    app = FastAPI(title="Heta", version="0.1.0", summary=f"Heta knowledge base at {kb.path}", lifespan=lifespan,
                  docs_url=None, redoc_url=None)
    app.state.kb = kb
    jobs = app.state.jobs = JobRunner(kb.secrets(), JobRecords(kb))
    install_error_handlers(app, kb.secrets())
    if config.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=list(config.cors_origins), allow_methods=["GET", "POST", "DELETE"],
            allow_headers=["Authorization", "Content-Type"],
        )
    # added last = outermost: the token and size checks run before anything else, CORS preflights included
    app.add_middleware(Guard, token=config.token, max_body_bytes=config.max_body_bytes, max_upload_bytes=config.max_upload_bytes)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"status": "ok"}

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(_static("index.html"), headers={"Content-Security-Policy": PAGE_CSP})

    @app.get("/static/{name}", include_in_schema=False)
    async def static_file(name: str) -> Response:
        if name not in STATIC_FILES:
            raise ApiError(404, "NotFound", f"No static file {name!r}.")
        return Response(_static(name), media_type=STATIC_FILES[name])

    @app.get(f"{API}/modes")
    async def modes() -> dict[str, Any]:
        return {"modes": mode_rows(kb)}

    @app.post(f"{API}/query")
    async def query(body: QueryBody) -> Response:
        options = {**body.options, **({"answer": True} if body.answer else {})}
        response = await kb.query(body.text, mode=body.mode, top_k=body.top_k, filters=body.filters, options=options, trace=body.trace)
        return _json(response.to_dict())

    @app.post(f"{API}/search")
    async def search(body: SearchBody) -> Response:
        options = {name: getattr(body, name) for name in SEARCH_OPTIONS if getattr(body, name) is not None}
        response = await kb.query(body.query, mode=MEMORY_MODE, top_k=body.top_k, filters=body.filters, options=options)
        return _json({
            "results": [_memory_result(result) for result in response.results],
            "related": list(response.metadata.get("related", [])),
            "issues": response.issues,
            "ranking": response.metadata.get("ranking"),
        })

    @app.get(f"{API}/documents")
    async def documents() -> dict[str, Any]:
        kb._reload_if_changed()
        return {"documents": [_record(record) for record in kb.documents.values()]}

    @app.get(f"{API}/documents/{{document_id:path}}")
    async def document(document_id: str) -> dict[str, Any]:
        try:
            return _record(kb.document(document_id))
        except KeyError:
            raise ApiError(404, "UnknownDocument", f"No document {document_id!r}; GET {API}/documents lists them.") from None

    @app.post(f"{API}/documents", status_code=202)
    async def add_documents(body: AddDocumentsBody) -> dict[str, Any]:
        for document in body.documents:  # a bad id is the request's fault: 422 now, not a failed job later
            if document.id is not None:
                check_document_id(document.id)
        sources = [
            SourceDocument(text=d.text, id=d.id, name=d.name, metadata=document_metadata(d.metadata, d.importance, d.tags))
            for d in body.documents
        ]
        known = [source.id for source in sources if source.id]
        return {"job": (await _start(jobs, kb, "build", _build(kb, sources), known)).to_dict()}

    @app.post(f"{API}/documents/upload", status_code=202)
    async def upload_document(
        file: UploadFile = File(...),
        id: str | None = Form(None),
        importance: float | None = Form(None),
        tags: str | None = Form(None, description="comma-separated"),
        metadata: str | None = Form(None, description="a JSON object"),
    ) -> dict[str, Any]:
        extra = _json_object(metadata)
        tag_list = [t.strip() for t in tags.split(",") if t.strip()] if tags is not None else None
        # the client's file name, without any folders it names ("/etc/passwd" is "passwd"): it becomes the
        # document's name and source, and the server's disk layout is none of the client's business
        name = upload_name(file.filename)
        check_document_id(id or name)
        source = SourceDocument(data=await file.read(), id=id or name, name=name, metadata=document_metadata(extra, importance, tag_list))
        return {"job": (await _start(jobs, kb, "build", _build(kb, [source]), [source.id])).to_dict()}

    @app.delete(f"{API}/documents/{{document_id:path}}", status_code=202)
    async def remove_document(document_id: str) -> dict[str, Any]:
        kb._reload_if_changed()
        if document_id not in kb.documents:
            raise ApiError(404, "UnknownDocument", f"No document {document_id!r}; GET {API}/documents lists them.")
        return {"job": (await _start(jobs, kb, "remove", _remove(kb, [document_id]), [document_id])).to_dict()}

    @app.post(f"{API}/documents/remove", status_code=202)
    async def remove_documents(body: RemoveDocumentsBody) -> dict[str, Any]:
        return {"job": (await _start(jobs, kb, "remove", _remove(kb, body.ids), list(body.ids))).to_dict()}

    @app.get(f"{API}/jobs/{{job_id}}")
    async def job(job_id: str) -> dict[str, Any]:
        return {"job": await asyncio.to_thread(jobs.get, job_id)}

    return app


async def _start(jobs: JobRunner, kb: KnowledgeBase, kind: str, work: Any, documents: list[str] | None = None) -> Job:
    if kb.state.writer_active() and jobs.running() is None:
        raise KnowledgeBaseLockedError(
            f"Another process is writing the knowledge base at {kb.path} (a `heta build` or remove); "
            "retry when it has finished."
        )
    return await jobs.start(kind, work, documents or [])


#: the page's own files (besides index.html), with their types: open without the token, like the page
STATIC_FILES = {"page.js": "text/javascript; charset=utf-8", "page.css": "text/css; charset=utf-8"}
#: the page runs only its own script and style, talks only to this server, and is framed by nobody
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


def _static(name: str) -> str:
    return resources.files("heta_server").joinpath(f"static/{name}").read_text(encoding="utf-8")


def upload_name(filename: str | None) -> str:
    """An uploaded file's base name (either kind of slash), or ``document.txt`` when it has none."""
    return PurePosixPath((filename or "").replace("\\", "/")).name.strip() or "document.txt"


def _build(kb: KnowledgeBase, sources: list[SourceDocument]) -> Any:
    async def work(job: Job) -> dict[str, Any]:
        report = await kb.build(sources, progress=job.progress)
        return report.to_dict()

    return work


def _remove(kb: KnowledgeBase, ids: list[str]) -> Any:
    async def work(job: Job) -> dict[str, Any]:
        removed = await kb.delete_documents(ids)
        return {"removed": [record.id for record in removed]}

    return work


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


def _record(record: Any) -> dict[str, Any]:
    return {
        "id": record.id, "source": record.source, "name": record.name, "state": record.state, "size": record.size,
        "metadata": dict(record.metadata), "added": record.added, "updated": record.updated,
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
            "importance": metadata.get("importance"),
            "tags": metadata.get("tags"),
            "last_access": metadata.pop("last_access", None),
            "metadata": metadata,
        },
        "score": result.score,
        **scores,
        "sources": list(result.sources),
    }


