"""Errors as JSON: ``{"error": {"code": ..., "message": ...}}`` with the Python API's class name as the code.

Never a traceback: an unexpected exception is logged here (type only, no message, since a
message may quote a secret) and answered with a plain 500.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from heta_framework.common.secrets import redact
from heta_framework.errors import (
    HetaError,
    InvalidAccessError,
    InvalidDocumentIdError,
    InvalidQueryError,
    KnowledgeBaseBusyError,
    KnowledgeBaseLockedError,
    ModeUnavailableError,
    UnknownNameError,
)
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)

#: the most specific class wins (checked in order)
STATUS_BY_ERROR: tuple[tuple[type[BaseException], int], ...] = (
    (InvalidQueryError, 422),
    (InvalidDocumentIdError, 422),
    (InvalidAccessError, 422),
    (UnknownNameError, 404),
    (ModeUnavailableError, 409),
    (KnowledgeBaseLockedError, 409),
    (KnowledgeBaseBusyError, 503),
)


class ApiError(Exception):
    """An error of the server itself (not found, write in progress, too large) with its HTTP status."""

    def __init__(self, status: int, code: str, message: str, **details: object):
        super().__init__(message)
        self.status, self.code, self.details = status, code, details


def error_body(code: str, message: str, **details: object) -> dict:
    error: dict = {"code": code, "message": message}
    if details:
        error["details"] = details
    return {"error": error}


def status_of(exc: HetaError) -> int:
    return next((status for cls, status in STATUS_BY_ERROR if isinstance(exc, cls)), 400)


def install_error_handlers(app: FastAPI, secrets: list) -> None:
    def clean(text: str) -> str:
        return redact(text, *secrets)

    @app.exception_handler(HetaError)
    async def heta_error(_request: Request, exc: HetaError) -> JSONResponse:
        headers = {"Retry-After": "1"} if isinstance(exc, KnowledgeBaseBusyError) else None
        return JSONResponse(error_body(type(exc).__name__, clean(str(exc))), status_code=status_of(exc), headers=headers)

    @app.exception_handler(ApiError)
    async def api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(error_body(exc.code, clean(str(exc)), **exc.details), status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors()]
        return JSONResponse(error_body("InvalidRequest", "; ".join(problems) or "invalid request"), status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:
            # FastAPI's answer to a body it could not parse at all (not UTF-8, JSON nested past the parser's depth):
            # the documented answer to a body that is not the documented JSON is 422 InvalidRequest
            return JSONResponse(error_body("InvalidRequest", f"The request body could not be read as JSON ({exc.detail})."), status_code=422)
        code = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "HTTPError")
        return JSONResponse(error_body(code, str(exc.detail)), status_code=exc.status_code)

