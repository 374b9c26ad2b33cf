"""The OpenAI-compatible endpoints: ``GET /v1/models`` and ``POST /v1/chat/completions``, for chat front-ends.

A chat completion is a Heta query: the last user message is searched (as its caller, with its
token's principals) in the knowledge base and mode the model name picks (``chat_request.py``),
and the answer is written from the results with ``[n]`` citations, its sources listed under it
("Sources:"), since a chat window shows only the message. Without a language model in the recipe
the message lists the best passages instead. ``stream`` streams it as ``chat.completion.chunk``
events; a model failing mid-answer ends the stream with an ``{"error": ...}`` event, as OpenAI does.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from heta_framework.common.audit import audit
from heta_framework.contracts.search import QueryResponse, QueryResult

from heta_server.answer_stream import AnswerEnd, Piece, stream_answer
from heta_server.chat_request import ChatBody, check_fields, model_name, parse_model, question_of, unknown_model
from heta_server.config import DEFAULT_KB
from heta_server.errors import ApiError
from heta_server.request_log import note
from heta_server.sse import EventStream, sse_event
from heta_server.tenants import Call, Tenants, caller_of

#: results listed in a message when there is no language model to answer
LISTED_RESULTS = 5


def chat_routes(tenants: Tenants, *, audit_reads: bool) -> APIRouter:
    router = APIRouter()

    @router.get("/models")
    async def models(request: Request) -> dict[str, Any]:
        """One model per knowledge base the caller may use and available mode (plus ``heta``: the best mode)."""
        caller = caller_of(request)
        data = []
        for name in tenants.usable(caller):
            kb = tenants.get(name, caller).kb
            modes: list[str | None] = [None, *kb.available_queries] if name == DEFAULT_KB else list(kb.available_queries)
            data += [{"id": model_name(name, mode), "object": "model", "created": 0, "owned_by": "heta"} for mode in modes]
        return {"object": "list", "data": data}

    @router.post("/chat/completions")
    async def chat_completions(body: ChatBody, request: Request) -> Response:
        ignored = check_fields(body)
        question = question_of(body)
        caller = caller_of(request)
        target = parse_model(body.model)
        try:
            call = Call(caller, tenants.get(target.kb, caller))
        except ApiError:
            raise unknown_model(body.model) from None  # a knowledge base it may not use is a model that does not exist
        if target.mode is not None and call.kb.query_engines.canonical(target.mode) not in call.kb.query_engines.modes:
            raise unknown_model(body.model)
        note(request, mode=target.mode, query=question, models_loaded=await call.tenant.ready())
        response = await call.kb.query(question, mode=target.mode, top_k=body.heta.top_k, filters=body.heta.filters,
                                       options={k: v for k, v in body.heta.options.items() if k != "answer"},
                                       principals=caller.principals)
        note(request, mode=response.metadata.get("mode"))
        if audit_reads:
            audit("query", call.actor, call.kb.path, mode=response.metadata.get("mode"),
                  documents=sorted({r.document_id for r in response.results if r.document_id}))
        headers = {"X-Heta-Ignored-Fields": ", ".join(ignored)} if ignored else None
        answer = stream_answer(call.kb, question, response, wanted=True, temperature=body.temperature or 0.0, max_tokens=body.token_limit())
        completion_id = f"chatcmpl-heta-{uuid.uuid4().hex[:24]}"
        if body.stream:
            return EventStream(_chunks(answer, response, body, completion_id), headers=headers)
        return await _whole(answer, response, body, completion_id, headers)

    return router


async def _whole(answer: AsyncIterator[Piece | AnswerEnd], response: QueryResponse, body: ChatBody, completion_id: str,
                 headers: dict[str, str] | None) -> Response:
    end = AnswerEnd(None)
    async for item in answer:
        if isinstance(item, AnswerEnd):
            end = item
    if end.error is not None:
        raise ApiError(502, end.error["code"], end.error["message"])
    content = _message(end, response)
    return JSONResponse({
        "id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": body.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop", "logprobs": None}],
        "usage": _usage(end),
        "citations": _citations(end, response),
        "heta": _extension(end, response),
    }, headers=headers)


async def _chunks(answer: AsyncIterator[Piece | AnswerEnd], response: QueryResponse, body: ChatBody, completion_id: str) -> AsyncIterator[bytes]:
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> bytes:
        return sse_event({"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": body.model,
                          "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra})

    yield chunk({"role": "assistant", "content": ""})
    async for item in answer:
        if isinstance(item, Piece):
            yield chunk({"content": item.text})
            continue
        if item.error is not None:  # what OpenAI sends when generation fails mid-stream; its clients raise on it
            yield sse_event({"error": {"message": item.error["message"], "type": "server_error", "code": item.error["code"], "param": None}})
            return
        tail = _message(item, response) if item.answer is None else _sources(item, response)
        if tail:
            yield chunk({"content": tail})
        yield chunk({}, "stop", citations=_citations(item, response), heta=_extension(item, response))
        if body.include_usage():
            yield sse_event({"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": body.model,
                             "choices": [], "usage": _usage(item)})
    yield sse_event("[DONE]")


def _message(end: AnswerEnd, response: QueryResponse) -> str:
    """The assistant message: the answer and its sources, or, with no answer, the best passages."""
    if end.answer is not None:
        return end.answer + _sources(end, response)
    if not response.results:
        return "Nothing in the knowledge base matches this question."
    reason = "No language model is configured for this knowledge base" if any(
        issue.get("code") == "answer_unavailable" for issue in end.issues) else "No answer was written"
    listed = [f"[{i}] {_where(r)}: {r.text.strip()[:400]}" for i, r in enumerate(response.results[:LISTED_RESULTS], start=1)]
    return f"{reason}; the best passages:\n\n" + "\n\n".join(listed)


def _sources(end: AnswerEnd, response: QueryResponse) -> str:
    by_id = {r.id: r for r in response.results}
    lines = [f"{c.marker} {_where(by_id[c.result_id])}" for c in end.citations if c.result_id in by_id]
    return "\n\nSources:\n" + "\n".join(lines) if lines else ""


def _where(result: QueryResult) -> str:
    location = result.location or str(result.metadata.get("source") or "")
    return f"{location} ({result.document_id})" if result.document_id and result.document_id not in location else location or result.id


def _citations(end: AnswerEnd, response: QueryResponse) -> list[dict[str, Any]]:
    by_id = {r.id: r for r in response.results}
    return [{"marker": c.marker, "result_id": c.result_id, "document_id": by_id[c.result_id].document_id if c.result_id in by_id else None,
             "text": c.text} for c in end.citations]


def _extension(end: AnswerEnd, response: QueryResponse) -> dict[str, Any]:
    return {"mode": response.metadata.get("mode"), "issues": [dict(i) for i in (*response.issues, *end.issues)],
            "results": [{"id": r.id, "document_id": r.document_id, "score": r.score, "where": _where(r)} for r in response.results]}


def _usage(end: AnswerEnd) -> dict[str, int]:
    return {"prompt_tokens": end.prompt_tokens, "completion_tokens": end.completion_tokens, "total_tokens": end.prompt_tokens + end.completion_tokens}
