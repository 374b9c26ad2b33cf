"""One ``heta.requests`` line per request: method, path, status, time, mode; never the token; the query's text only
when asked; a first query that had to load the models says so."""

from __future__ import annotations

import logging
import re

import pytest
from heta_server.config import ServerConfig
from heta_server.tokens import parse_tokens, token_hash

TOKEN = "tok-logged-0123456789abcdef"
QUESTION = "Who discovered penicillin?"


@pytest.fixture
def lines(caplog):
    caplog.set_level(logging.INFO, logger="heta.requests")

    def read() -> list[str]:
        return [record.getMessage() for record in caplog.records if record.name == "heta.requests"]

    return read


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

    logged = lines()
    assert re.fullmatch(r"POST /api/v1/query 200 \d+\.\d ms mode=full_text_search", logged[0])
    assert re.fullmatch(r"POST /api/v1/query 200 \d+\.\d ms mode=full_text_search", logged[1])  # the stream, once it ended
    assert re.fullmatch(r"GET /api/v1/documents 401 \d+\.\d ms", logged[2])
    assert re.fullmatch(r"GET /healthz 200 \d+\.\d ms", logged[3])  # no query string
    assert len(logged) == 4
    assert not any(TOKEN in line or "penicillin" in line for line in logged)


def test_the_query_text_only_when_asked_and_no_lines_when_off(answer_kb, server_factory, lines):
    running = server_factory(answer_kb, ServerConfig(request_log=True, log_queries=True))
    with running.client() as client:
        client.post("/api/v1/query", json={"text": QUESTION})
    assert lines()[-1].endswith(f"mode=full_text_search query={QUESTION!r}")

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
    first, second = lines()[-2:]
    assert re.fullmatch(r"POST /api/v1/query 200 \d+\.\d ms mode=vector_search models_loaded=\d+\.\ds", first)
    assert "models_loaded" not in second
