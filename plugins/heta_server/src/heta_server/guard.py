"""ASGI middleware in front of every endpoint: the bearer token, the body size limit, the last-resort error.

The token is looked up in the server's ``TokenTable`` (``tokens.py``: hashed, compared with every entry in
constant time); the caller it stands for goes into the request's scope (``CALLER_KEY``) for the endpoints.
Without tokens every request is the anonymous caller (loopback only).

Pure ASGI (not ``BaseHTTPMiddleware``) so an oversize body is refused while it streams in,
before the application buffers it.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from heta_server.console_static import STATIC_FILES
from heta_server.errors import error_body
from heta_server.tenants import CALLER_KEY
from heta_server.tokens import ANONYMOUS, Caller, TokenTable

log = logging.getLogger(__name__)

#: reachable without the token: load balancers and supervisors probe /healthz, and a browser opens the page
#: (it never sends a bearer header on navigation); the page then asks for the token and sends it to the API
OPEN_PATHS = frozenset({"/healthz", "/", *(f"/static/{name}" for name in STATIC_FILES)})
#: on every answer: no type sniffing, no referrer leaving the server, no framing
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
]
#: the upload endpoint of the --kb knowledge base and of every named one
UPLOAD_PATH = re.compile(r"/api/v1/(kbs/[^/]+/)?documents/upload")


async def _send_json(send: Any, status: int, body: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()), *headers],
    })
    await send({"type": "http.response.body", "body": payload})


class Guard:
    def __init__(self, app: Any, *, tokens: TokenTable | None, max_body_bytes: int, max_upload_bytes: int):
        self.app = app
        self.tokens = tokens
        self.max_body_bytes = max_body_bytes
        self.max_upload_bytes = max_upload_bytes

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = _with_security_headers(send)
        path = scope.get("path", "")
        caller = self._caller(scope)
        if caller is None and path not in OPEN_PATHS and not _is_preflight(scope):
            await _send_json(
                send, 401, error_body("Unauthorized", "This server needs 'Authorization: Bearer <token>' (a token it was started with)."),
                [(b"www-authenticate", b"Bearer")],
            )
            return
        if caller is not None:
            scope = {**scope, CALLER_KEY: caller}
        limit = self.max_upload_bytes if UPLOAD_PATH.fullmatch(path) else self.max_body_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _send_json(send, 413, _too_large(limit))
            return
        received = 0
        too_large = False
        replaced = False
        started = False

        async def limited_receive() -> dict:
            # past the limit the body is cut short; the app's answer to the cut body is then replaced by a 413
            nonlocal received, too_large
            if too_large:
                return {"type": "http.request", "body": b"", "more_body": False}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    too_large = True
                    return {"type": "http.request", "body": b"", "more_body": False}
            return message

        async def guarded_send(message: dict) -> None:
            nonlocal replaced, started
            if too_large:
                if not replaced:
                    replaced = True
                    await _send_json(send, 413, _too_large(limit))
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception as exc:  # the last resort: JSON, never a traceback (whose message might hold a secret)
            log.error("request to %s failed with %s", path, type(exc).__name__)
            if too_large and not replaced:
                await _send_json(send, 413, _too_large(limit))
            elif not replaced and not started:
                await _send_json(send, 500, error_body(
                    "InternalError", f"The server met an unexpected {type(exc).__name__}; see the server log."
                ))

    def _caller(self, scope: dict) -> Caller | None:
        """Who the request's bearer token stands for; ``None``: no token, or one this server does not know."""
        if self.tokens is None:
            return ANONYMOUS
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                scheme, _, given = value.partition(b" ")
                return self.tokens.authenticate(given.strip()) if scheme.lower() == b"bearer" else None
        return None


def _content_length(scope: dict) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _too_large(limit: int) -> dict:
    return error_body("PayloadTooLarge", f"The request body is larger than this server accepts ({limit} bytes).", limit=limit)


def _is_preflight(scope: dict) -> bool:
    """A browser's CORS preflight: it never carries credentials, so the CORS middleware answers it (allowed
    origins get their Access-Control headers, others none); the request that follows needs the token."""
    if scope.get("method") != "OPTIONS":
        return False
    names = {name for name, _ in scope.get("headers", ())}
    return b"origin" in names and b"access-control-request-method" in names


def _with_security_headers(send: Any) -> Any:
    async def sending(message: dict) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *SECURITY_HEADERS]}
        await send(message)

    return sending
