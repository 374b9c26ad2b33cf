"""One ``heta.requests`` line per request: method, path, status, time, mode; never the token; the query's text only
when asked; a first query that had to load the models says so."""

from __future__ import annotations

import logging
import re
import threading

import pytest
from heta_server.config import ServerConfig
from heta_server.tokens import parse_tokens, token_hash

TOKEN = "tok-logged-0123456789abcdef"
QUESTION = "Who discovered penicillin?"


class Lines(logging.Handler):
    """The ``heta.requests`` lines, with a wait: a streamed answer's line is written after its last byte went out, so
    the client may have it all before the server has logged it."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.seen: list[str] = []
        self.changed = threading.Condition()

    def emit(self, record: logging.LogRecord) -> None:
        with self.changed:
            self.seen.append(record.getMessage())
            self.changed.notify_all()

    def __call__(self, count: int | None = None) -> list[str]:
        with self.changed:
            if count is not None:
                assert self.changed.wait_for(lambda: len(self.seen) >= count, timeout=30), self.seen
            return list(self.seen)


@pytest.fixture
def lines():
    logger = logging.getLogger("heta.requests")
    handler, level = Lines(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def table():
    return parse_tokens({"tokens": [{"sha256": token_hash(TOKEN), "principal": "p", "kbs": ["*"], "rights": ["read"]}]})


def test_each_request_is_one_line_without_token_or_query_text(answer_kb, server_factory, lines):
    running = server_factory(answer_kb, ServerConfig(tokens=table(), request_log=True))
    auth = {"Authorization": f"Bearer {TOKEN}"}
    with running.client() as client:
        assert client.post("/api/v1/query", json={"text": QUESTION}, headers=auth).status_code == 200
        assert client.post("/api/v1/query", json={"text": QUESTION, "stream": True, "mode": "full_text_search"},
                           headers=auth).status_code == 200
        assert client.get("/api/v1/documents").status_code == 401
        assert client.get("/healthz?token=x").status_code == 200

    logged = sorted(lines(4))  # the stream's line may come after the later requests' lines
    assert re.fullmatch(r"GET /api/v1/documents 401 \d+\.\d ms", logged[0])
    assert re.fullmatch(r"GET /healthz 200 \d+\.\d ms", logged[1])  # no query string
    assert all(re.fullmatch(r"POST /api/v1/query 200 \d+\.\d ms mode=full_text_search", line) for line in logged[2:])
    assert len(logged) == 4
    assert not any(TOKEN in line or "penicillin" in line for line in logged)


def test_the_query_text_only_when_asked_and_no_lines_when_off(answer_kb, server_factory, lines):
    running = server_factory(answer_kb, ServerConfig(request_log=True, log_queries=True))
    with running.client() as client:
        client.post("/api/v1/query", json={"text": QUESTION})
    assert lines(1)[-1].endswith(f"mode=full_text_search query={QUESTION!r}")

    quiet = server_factory(answer_kb, ServerConfig())  # the default: no request lines
    before = len(lines())
    with quiet.client() as client:
        client.post("/api/v1/query", json={"text": QUESTION})
    assert len(lines()) == before


def test_a_first_query_that_loads_the_models_says_so(built_kb, server_factory, lines):
    running = server_factory(built_kb, ServerConfig(request_log=True))  # warm=False: the first query loads the model
    with running.client() as client:
        for _ in range(2):
            assert client.post("/api/v1/query", json={"text": QUESTION, "mode": "vector_search"}).status_code == 200
    first, second = lines(2)[-2:]
    assert re.fullmatch(r"POST /api/v1/query 200 \d+\.\d ms mode=vector_search models_loaded=\d+\.\ds", first)
    assert "models_loaded" not in second
