"""A scripted HTTP server on 127.0.0.1 for testing plugins that call model APIs.

Tests use the *real* ``openai`` and ``cohere`` clients; only the server is fake.
``ScriptedServer`` runs a stdlib ``ThreadingHTTPServer`` in a background thread
on a free port of 127.0.0.1 (it never listens anywhere else), answers each
request from a per-route queue of scripted responses or from a responder
function, and records every request it saw::

    from heta_framework.common.models import LanguageModel
    from heta_framework.testing.http import ScriptedServer, chat_completion_body

    with ScriptedServer() as server:
        server.enqueue("/v1/chat/completions",
                       status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0"})
        server.enqueue("/v1/chat/completions", body=chat_completion_body("hello", prompt_tokens=7))
        model = LanguageModel(model_name="openai/test-model", base_url=server.base_url, api_key="sk-test")
        ...                                     # call the client under test
        assert [r.path for r in server.requests] == ["/v1/chat/completions"] * 2
        assert server.requests[-1].json["model"] == "test-model"

Routes
    A route is a path without the query string (``"/v1/embeddings"``). A path
    that does not start with ``/`` is relative to ``prefix`` (default ``/v1``), so
    ``server.enqueue("chat/completions", ...)`` is the same route. Routes match
    any HTTP method.

Answering a request, in this order
    1. the route's FIFO queue (``enqueue``): each scripted response answers one request;
    2. the route's responder (``respond(route, fn)``), used whenever the queue is
       empty: ``fn(request: RecordedRequest)`` returns a ``Reply``, a dict/list
       (sent as a 200 JSON body) or ``None`` (falls through to 3). Use it to answer
       by request content, e.g. one extraction result per chunk;
    3. the server-wide fallback responder (``ScriptedServer(fallback=fn)`` or
       ``server.fallback = fn``);
    4. otherwise ``404`` with an OpenAI-style error body naming the route, and the
       request is listed in ``server.unanswered``.

    A ``Reply`` has ``status``, ``body`` (JSON-serialisable, ``str`` or ``bytes``),
    ``headers`` and ``delay`` (seconds to wait before answering; use it with a short
    client timeout to test time-outs, or to make requests overlap). A responder
    that raises answers ``500`` and the error text is kept in ``server.errors``.

    A ``StreamReply`` (queued or returned by a responder) answers as Server-Sent Events,
    piece by piece: ``chat_stream_reply(["Fle", "ming"], fail_after=, drop_after=, interval=)``
    is a streamed chat completion, whole or failing mid-answer; ``reply.cut`` is set when the
    client hung up before the end.

What is recorded
    ``server.requests``: every ``RecordedRequest`` (``method``, ``path``, ``query``,
    ``headers`` with lower-case names, raw ``body`` bytes and parsed ``json``, or
    ``None``), in arrival order; ``server.requests_to(route)`` filters one route.
    ``server.max_in_flight`` is the largest number of requests that were being
    handled at the same moment, the way to assert a client's concurrency bound.
    ``server.reset()`` clears queues, responders, records and counters.
    ``server.check()`` raises ``AssertionError`` if a request went unanswered, a
    responder raised, or a queued reply was never used.

Bodies for common APIs
    ``chat_completion_body(text, prompt_tokens=, completion_tokens=)`` (OpenAI chat
    completions), ``chat_tool_calls_body([(name, arguments), ...])`` (an answer that calls tools;
    ``tool_messages(request)`` reads the tool results a later request sends back;
    ``chat_stream_tool_calls_reply`` streams such an answer), ``embeddings_body(vectors)`` (OpenAI embeddings),
    ``rerank_body([(index, score), ...])`` (Cohere v2 rerank), ``openai_error_body(message)``.
    ``last_user_message(request)`` reads the last user message of a chat request,
    handy in responders.

With pytest
    Import the ready-made fixture into your ``tests/conftest.py`` (pytest collects
    fixtures from names in conftest's namespace)::

        from heta_framework.testing.http import scripted_server  # noqa: F401  (a fixture)

        async def test_something(scripted_server):
            scripted_server.enqueue("chat/completions", body=chat_completion_body("{}"))

    or write your own in three lines: ``with ScriptedServer() as server: yield server``.
    Stopping the server releases handlers still sleeping in a ``delay``.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs

__all__ = [
    "RecordedRequest",
    "Reply",
    "Responder",
    "ScriptedServer",
    "StreamReply",
    "chat_completion_body",
    "chat_stream_reply",
    "chat_stream_tool_calls_reply",
    "chat_tool_calls_body",
    "embeddings_body",
    "last_user_message",
    "openai_error_body",
    "rerank_body",
    "scripted_server",
    "tool_messages",
]

LOOPBACK = "127.0.0.1"


@attrs.frozen
class Reply:
    """One scripted answer."""

    status: int = 200
    body: Any = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    delay: float = 0.0

    def encoded(self) -> tuple[bytes, str]:
        if self.body is None:
            return b"", "application/json"
        if isinstance(self.body, bytes):
            return self.body, "application/octet-stream"
        if isinstance(self.body, str):
            return self.body.encode("utf-8"), "text/plain; charset=utf-8"
        return json.dumps(self.body).encode("utf-8"), "application/json"


@attrs.frozen(eq=False)
class StreamReply:
    """A scripted answer sent piece by piece as Server-Sent Events (``text/event-stream``), the way a model
    server streams: each of ``events`` is one ``data:`` line (a dict or list as JSON, a ``str`` as it is),
    ``interval`` seconds apart, then ``data: [DONE]`` (``end="done"``) or nothing, the connection simply
    closed (``end="drop"``: a server that died mid-answer). ``chat_stream_reply`` builds OpenAI's chunks.

    What happened to it is kept on the reply itself: ``sent`` counts the events written, and ``cut`` is set
    when the client went away before the end (a write failed), so a test can wait on it, not sleep."""

    events: Sequence[Any]
    end: str = attrs.field(default="done", validator=attrs.validators.in_(("done", "drop")))
    status: int = 200
    headers: Mapping[str, str] = attrs.field(factory=dict)
    delay: float = 0.0
    interval: float = 0.0
    sent: list[int] = attrs.field(factory=list, repr=False)  # one entry per event written
    cut: threading.Event = attrs.field(factory=threading.Event, repr=False)

    def lines(self) -> Iterator[bytes]:
        for event in self.events:
            data = event if isinstance(event, str) else json.dumps(event)
            yield f"data: {data}\n\n".encode()
        if self.end == "done":
            yield b"data: [DONE]\n\n"


@attrs.frozen
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    query: Mapping[str, list[str]]
    headers: Mapping[str, str]  # names in lower case
    body: bytes
    json: Any  # the parsed body, or None when it is not JSON

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)


Responder = Callable[[RecordedRequest], "Reply | StreamReply | Mapping[str, Any] | Sequence[Any] | None"]


class ScriptedServer:
    """A threaded HTTP server on 127.0.0.1 that answers from scripts and records requests."""

    def __init__(self, *, prefix: str = "/v1", fallback: Responder | None = None):
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self.fallback = fallback
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Reply | StreamReply]] = {}
        self._responders: dict[str, Responder] = {}
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.requests: list[RecordedRequest] = []
        self.unanswered: list[RecordedRequest] = []
        self.errors: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0

    # --- lifecycle ------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _Server((LOOPBACK, 0), _handler_for(self))
        self._httpd.scripted = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="heta-scripted-http", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()  # wakes handlers waiting in a delay
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("ScriptedServer is not running: use `with ScriptedServer() as server:` or call start()")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no prefix): for clients that add their own path, like Cohere's."""
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI client takes as ``base_url``."""
        return self.url + self.prefix

    # --- scripting ------------------------------------------------------------------

    def route(self, path: str) -> str:
        """The normalised route for ``path`` (relative paths are under ``prefix``)."""
        path = urlsplit(path).path if "://" in path else path.split("?", 1)[0]
        if not path.startswith("/"):
            path = f"{self.prefix}/{path}"
        return path

    def enqueue(
        self,
        path: str,
        reply: Reply | StreamReply | None = None,
        *,
        status: int = 200,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        delay: float = 0.0,
        times: int = 1,
    ) -> None:
        """Queue a response for the next request to ``path`` (``times`` copies of it)."""
        if reply is None:
            reply = Reply(status=status, body=body, headers=dict(headers or {}), delay=delay)
        with self._lock:
            queue = self._queues.setdefault(self.route(path), deque())
            queue.extend([reply] * times)

    def respond(self, path: str, responder: Responder) -> None:
        """Answer requests to ``path`` with ``responder(request)`` whenever its queue is empty."""
        with self._lock:
            self._responders[self.route(path)] = responder

    def pending(self, path: str) -> int:
        """How many queued responses for ``path`` are still unused."""
        with self._lock:
            return len(self._queues.get(self.route(path), ()))

    def reset(self) -> None:
        with self._lock:
            self._queues.clear()
            self._responders.clear()
            self.requests.clear()
            self.unanswered.clear()
            self.errors.clear()
            self.max_in_flight = self.in_flight

    def check(self) -> None:
        """Fail if a request went unanswered, a responder raised, or a queued reply was never used.

        Call it at the end of a test that scripted every request it expects.
        """
        with self._lock:
            problems = [f"unanswered: {r.method} {r.path}" for r in self.unanswered]
            problems += [f"error: {e}" for e in self.errors]
            problems += [f"unused: {len(q)} queued repl(ies) for {route}" for route, q in self._queues.items() if q]
        if problems:
            raise AssertionError("ScriptedServer:\n  " + "\n  ".join(problems))

    # --- records --------------------------------------------------------------------

    def requests_to(self, path: str) -> list[RecordedRequest]:
        route = self.route(path)
        with self._lock:
            return [r for r in self.requests if r.path == route]

    # --- serving (called from handler threads) --------------------------------------

    def _enter(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _answer(self, request: RecordedRequest) -> Reply | StreamReply:
        with self._lock:
            queue = self._queues.get(request.path)
            if queue:
                return queue.popleft()
            responder = self._responders.get(request.path)
        for candidate in (responder, self.fallback):
            if candidate is None:
                continue
            try:
                answer = candidate(request)
            except Exception as exc:  # a broken responder must show up in the test, not hang it
                with self._lock:
                    self.errors.append(f"{request.method} {request.path}: {type(exc).__name__}: {exc}")
                return Reply(status=500, body=openai_error_body(f"responder failed: {exc}", type="server_error"))
            if answer is None:
                continue
            return answer if isinstance(answer, Reply | StreamReply) else Reply(body=answer)
        with self._lock:
            self.unanswered.append(request)
        return Reply(status=404, body=openai_error_body(f"no scripted response for {request.method} {request.path}", type="not_found"))

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler sleeping in a long delay must not hold up stop()
    allow_reuse_address = True
    # socketserver's backlog of 5 refuses connections when 16 clients open at once (a concurrency bench does)
    request_queue_size = 128
    scripted: ScriptedServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        # Clients that time out close their socket mid-answer; that is expected here.
        if not isinstance(exc, ConnectionError | socket.timeout):
            with self.scripted._lock:
                self.scripted.errors.append(f"server: {type(exc).__name__}: {exc}")


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.0: one request per connection, so each concurrent request really is
        # a separate connection and thread, and max_in_flight counts true overlap.
        protocol_version = "HTTP/1.0"

        def _handle(self) -> None:
            split = urlsplit(self.path)
            body = self._read_body()
            try:
                parsed = json.loads(body) if body else None
            except (ValueError, UnicodeDecodeError):
                parsed = None
            request = RecordedRequest(
                method=self.command,
                path=server.route(split.path),
                query=parse_qs(split.query),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                json=parsed,
            )
            server._enter(request)
            left = False
            try:
                reply = server._answer(request)
                server._sleep(reply.delay)
                if isinstance(reply, StreamReply):
                    server._leave()
                    left = True
                    self._stream(reply)
                    return
                payload, content_type = reply.encoded()
                # Leave before the first byte goes out: once the client has its answer it may read
                # in_flight at once, and must never see this request still counted.
                server._leave()
                left = True
                self.send_response(reply.status)
                headers = {"Content-Type": content_type, **reply.headers, "Content-Length": str(len(payload))}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if payload and self.command != "HEAD":
                    self.wfile.write(payload)
            except (TimeoutError, BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (time-out test); nothing to answer
            finally:
                if not left:
                    server._leave()

        def _stream(self, reply: StreamReply) -> None:
            self.send_response(reply.status)
            for name, value in {"Content-Type": "text/event-stream", "Cache-Control": "no-cache", **reply.headers}.items():
                self.send_header(name, value)
            self.end_headers()
            try:
                for index, line in enumerate(reply.lines()):
                    if index:
                        server._sleep(reply.interval)
                    self.wfile.write(line)
                    self.wfile.flush()
                    reply.sent.append(index)
            except (TimeoutError, BrokenPipeError, ConnectionResetError):
                reply.cut.set()  # the client closed the stream before its end

        def _read_body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean; everything is in server.requests

    return Handler


# --- bodies of common APIs --------------------------------------------------------------


def chat_completion_body(
    text: str,
    *,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    model: str = "test-model",
    finish_reason: str = "stop",
) -> dict[str, Any]:
    """An OpenAI ``/chat/completions`` response whose single choice says ``text``."""
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def chat_tool_calls_body(
    calls: Sequence[tuple[str, Any]],
    *,
    text: str | None = None,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    model: str = "test-model",
    id_prefix: str = "call_",
) -> dict[str, Any]:
    """An OpenAI ``/chat/completions`` response whose assistant message calls tools: ``calls`` are
    ``(function name, arguments)``, the arguments a dict (sent as JSON) or a string sent as it is (to script
    malformed JSON). Call ids are ``call_0``, ``call_1``, ... The request that gets it carries ``tools`` and
    ``tool_choice`` in ``request.json``; the next request should carry one ``tool`` message per call
    (``tool_messages(request)``)."""
    tool_calls = [
        {"id": f"{id_prefix}{i}", "type": "function",
         "function": {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}}
        for i, (name, arguments) in enumerate(calls)
    ]
    body = chat_completion_body(text or "", prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, model=model,
                                finish_reason="tool_calls")
    body["choices"][0]["message"] = {"role": "assistant", "content": text, "tool_calls": tool_calls}
    return body


def tool_messages(request: RecordedRequest) -> list[dict[str, Any]]:
    """The ``tool`` messages (results of earlier tool calls) a chat-completions request carries, in order."""
    return [m for m in ((request.json or {}).get("messages") or []) if m.get("role") == "tool"]


def chat_stream_reply(
    pieces: Sequence[str],
    *,
    prompt_tokens: int = 10,
    completion_tokens: int | None = None,
    model: str = "test-model",
    fail_after: int | None = None,
    drop_after: int | None = None,
    interval: float = 0.0,
    delay: float = 0.0,
) -> StreamReply:
    """An OpenAI streamed ``/chat/completions`` answer (``chat.completion.chunk`` events): the role, one chunk
    per piece of ``pieces``, a last chunk with ``finish_reason`` "stop", and a usage chunk (``choices`` empty;
    ``completion_tokens`` defaults to the number of pieces).

    ``fail_after=n``: after n pieces an error event (``{"error": {...}}``, what OpenAI and vLLM send when
    generation fails) instead of the rest. ``drop_after=n``: after n pieces the connection closes with no
    finish and no ``[DONE]``."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    events: list[Any] = [chunk({"role": "assistant", "content": ""})]
    cut = fail_after if fail_after is not None else drop_after
    for index, piece in enumerate(pieces):
        if cut is not None and index == cut:
            break
        events.append(chunk({"content": piece}))
    if fail_after is not None:
        events.append(openai_error_body("the model failed mid-answer", type="server_error"))
        return StreamReply(events, end="drop", interval=interval, delay=delay)
    if drop_after is not None:
        return StreamReply(events, end="drop", interval=interval, delay=delay)
    completion = len(pieces) if completion_tokens is None else completion_tokens
    events.append(chunk({}, "stop"))
    events.append({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model, "choices": [],
                   "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion, "total_tokens": prompt_tokens + completion}})
    return StreamReply(events, interval=interval, delay=delay)


def chat_stream_tool_calls_reply(
    calls: Sequence[tuple[str, Any]],
    *,
    text: str | None = None,
    pieces: int = 2,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    model: str = "test-model",
    id_prefix: str = "call_",
    finish: bool = True,
) -> StreamReply:
    """A streamed answer that calls tools, as OpenAI streams one: the role, ``text`` if any, then per call a chunk
    with its index, id and name, and its arguments (a dict sent as JSON, or a string as it is) in ``pieces``
    fragments; a last chunk with ``finish_reason`` "tool_calls" ("stop" with no calls) and a usage chunk. ``finish=False`` closes the
    connection after the arguments, with no finish (a cut-off stream)."""

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]}

    events: list[Any] = [chunk({"role": "assistant", "content": None})]
    if text:
        events.append(chunk({"content": text}))
    for index, (name, arguments) in enumerate(calls):
        encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
        size = max(1, -(-len(encoded) // max(pieces, 1)))
        events.append(chunk({"tool_calls": [{"index": index, "id": f"{id_prefix}{index}", "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
        for start in range(0, len(encoded), size):
            events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": encoded[start: start + size]}}]}))
    if not finish:
        return StreamReply(events, end="drop")
    events.append(chunk({}, "tool_calls" if calls else "stop"))
    events.append({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model, "choices": [],
                   "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                             "total_tokens": prompt_tokens + completion_tokens}})
    return StreamReply(events)


def embeddings_body(vectors: Sequence[Sequence[float]], *, model: str = "test-embedding", prompt_tokens: int = 0) -> dict[str, Any]:
    """An OpenAI ``/embeddings`` response with one item per vector, in order."""
    return {
        "object": "list",
        "model": model,
        "data": [{"object": "embedding", "index": i, "embedding": [float(x) for x in vector]} for i, vector in enumerate(vectors)],
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }


def rerank_body(results: Sequence[tuple[int, float]], *, request_id: str = "rerank-scripted") -> dict[str, Any]:
    """A Cohere v2 ``/v2/rerank`` response; ``results`` are ``(document index, relevance score)``, best first."""
    return {
        "id": request_id,
        "results": [{"index": int(index), "relevance_score": float(score)} for index, score in results],
        "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
    }


def openai_error_body(message: str, *, type: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body (Cohere clients accept any JSON body for errors)."""
    return {"error": {"message": message, "type": type, "code": code, "param": None}, "message": message}


def last_user_message(request: RecordedRequest) -> str:
    """The content of the last ``user`` message of a chat-completions request ("" if none)."""
    messages = (request.json or {}).get("messages") or []
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return content or ""
    return ""


# --- pytest ---------------------------------------------------------------------------

try:  # pytest is a test-time tool, not a dependency of heta-core
    import pytest as _pytest
except ImportError:  # pragma: no cover
    _pytest = None

if _pytest is not None:

    @_pytest.fixture
    def scripted_server() -> Iterator[ScriptedServer]:
        """A running ``ScriptedServer``, stopped after the test."""
        with ScriptedServer() as server:
            yield server

else:  # pragma: no cover

    def scripted_server() -> Iterator[ScriptedServer]:
        raise RuntimeError("the scripted_server fixture needs pytest")
