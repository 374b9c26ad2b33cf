"""What the MCP tools do, over one request's ``Call`` (its caller and knowledge base), whatever the transport.

Each function is what the HTTP API does for the same request, with the same rules: queries carry the
caller's principals, a document the caller may not read does not exist for it (``UnknownDocument``),
writes need the write right. Failures raise ``ToolFailure`` carrying the HTTP API's code and status, which
the MCP server turns into a tool error (``is_error``), never a dropped session.
"""

from __future__ import annotations

import json
from typing import Any

from heta_framework.builtin.steps.parse import parsed_key
from heta_framework.cli.querying import mode_rows
from heta_framework.common.audit import audit
from heta_framework.common.secrets import redact
from heta_framework.errors import HetaError
from heta_framework.kb.documents import SourceDocument, check_document_id

from heta_server.answer_stream import AnswerEnd, stream_answer
from heta_server.errors import ApiError, status_of
from heta_server.metadata import document_metadata
from heta_server.routes import _build, _remove, _start, _with_id
from heta_server.tenants import Call

#: the most a ``read_document`` call returns at once: a page an assistant's context can hold
MAX_PAGE_CHARS = 20_000


class ToolFailure(Exception):
    """A tool's failure as the HTTP API would answer it: ``{"error": {"code", "message", "status"}}`` as text."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(json.dumps({"error": {"code": code, "message": message, "status": status}}, ensure_ascii=False))
        self.status, self.code = status, code


def failure(exc: BaseException, secrets: list[Any]) -> ToolFailure:
    if isinstance(exc, ApiError):
        return ToolFailure(exc.status, exc.code, redact(str(exc), *secrets))
    if isinstance(exc, HetaError):
        return ToolFailure(status_of(exc), type(exc).__name__, redact(str(exc), *secrets))
    return ToolFailure(500, "InternalError", f"The server met an unexpected {type(exc).__name__}; see the server log.")


def _result(result: Any) -> dict[str, Any]:
    return {"id": result.id, "document_id": result.document_id, "kind": result.kind, "score": round(float(result.score), 6),
            "where": result.location or result.metadata.get("source"), "text": result.text}


async def search(call: Call, query: str, mode: str | None, top_k: int, filters: dict[str, Any], options: dict[str, Any],
                 *, audit_reads: bool) -> dict[str, Any]:
    await call.tenant.ready()
    response = await call.kb.query(query, mode=mode, top_k=top_k, filters=filters,
                                   options={k: v for k, v in options.items() if k != "answer"}, principals=call.caller.principals)
    if audit_reads:
        audit("query", call.actor, call.kb.path, mode=response.metadata.get("mode"),
              documents=sorted({r.document_id for r in response.results if r.document_id}))
    return {"mode": response.metadata.get("mode"), "results": [_result(r) for r in response.results],
            "issues": [dict(issue) for issue in response.issues]}


def list_modes(call: Call) -> dict[str, Any]:
    return {"modes": [{key: row[key] for key in ("mode", "available", "reasons", "provided_by", "install")} for row in mode_rows(call.kb)]}


def list_documents(call: Call, offset: int, limit: int, *, audit_reads: bool) -> dict[str, Any]:
    records = call.readable()
    if audit_reads:
        audit("list_documents", call.actor, call.kb.path, documents=len(records))
    page = records[offset: offset + limit]
    return {
        "documents": [{"id": r.id, "name": r.name, "source": r.source, "state": r.state, "size": r.size, "metadata": dict(r.metadata)}
                      for r in page],
        "total": len(records),
        "next_offset": offset + len(page) if offset + len(page) < len(records) else None,
    }


def read_document(call: Call, document_id: str, offset: int, max_chars: int, *, audit_reads: bool) -> dict[str, Any]:
    record = call.document(document_id)  # 404 UnknownDocument when missing or not the caller's to read
    try:
        parsed = call.kb.objects.get_json(parsed_key(document_id))
    except FileNotFoundError:
        raise ApiError(409, "DocumentNotBuilt", f"The document {document_id!r} has no parsed text yet (state {record.state}); "
                                                "it is readable once a build has parsed it.") from None
    if audit_reads:
        audit("read_document", call.actor, call.kb.path, documents=[document_id])
    text = parsed.get("text", "")
    size = min(max_chars, MAX_PAGE_CHARS)
    end = min(len(text), offset + size)
    return {
        "id": record.id, "name": record.name, "source": record.source, "metadata": dict(parsed.get("metadata") or record.metadata),
        "pages": [page for page in parsed.get("pages", []) if _overlaps(page, offset, end)],
        "offset": offset, "total_chars": len(text), "next_offset": end if end < len(text) else None,
        "text": text[offset:end],
    }


def _overlaps(page: dict[str, Any], start: int, end: int) -> bool:
    first, last = page.get("start"), page.get("end")
    return not isinstance(first, int) or not isinstance(last, int) or (first < end and last > start)


async def answer(call: Call, question: str, mode: str | None, top_k: int, filters: dict[str, Any], *, audit_reads: bool) -> dict[str, Any]:
    await call.tenant.ready()
    response = await call.kb.query(question, mode=mode, top_k=top_k, filters=filters, principals=call.caller.principals)
    if audit_reads:
        audit("query", call.actor, call.kb.path, mode=response.metadata.get("mode"),
              documents=sorted({r.document_id for r in response.results if r.document_id}))
    end = AnswerEnd(None)
    async for item in stream_answer(call.kb, question, response, wanted=True):
        if isinstance(item, AnswerEnd):
            end = item
    if end.error is not None:
        raise ApiError(502, end.error["code"], end.error["message"])
    by_id = {r.id: r for r in response.results}
    return {
        "answer": end.answer, "mode": response.metadata.get("mode"),
        "citations": [{"marker": c.marker, "document_id": by_id[c.result_id].document_id if c.result_id in by_id else None,
                       "result_id": c.result_id, "text": c.text} for c in end.citations],
        "issues": [dict(i) for i in (*response.issues, *end.issues)], "usage": end.usage(),
    }


def _check_writer(call: Call) -> None:
    if not call.caller.may_write:
        raise ApiError(403, "Forbidden", "This token may only read; adding or removing documents needs a token with the write right.")


async def add_document(call: Call, text: str, document_id: str | None, name: str, metadata: dict[str, Any],
                       access: list[str] | None) -> dict[str, Any]:
    _check_writer(call)
    if document_id is not None:
        check_document_id(document_id)
    source = _with_id(SourceDocument(text=text, id=document_id, name=name, metadata=document_metadata(metadata, None, None), access=access))
    call.check_writable([str(source.id)])
    job = await _start(call, "build", _build(call, [source]), [str(source.id)])
    await call.tenant.jobs.wait_idle()  # one write at a time: this job's end
    return {"job": job.to_dict()}


async def remove_document(call: Call, document_id: str) -> dict[str, Any]:
    _check_writer(call)
    call.document(document_id)
    job = await _start(call, "remove", _remove(call, [document_id]), [document_id])
    await call.tenant.jobs.wait_idle()
    return {"job": job.to_dict()}
