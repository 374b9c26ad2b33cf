"""The shared scripted server (heta_framework.testing.http), exercised with stdlib HTTP."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import pytest
from heta_framework.testing.http import Reply, ScriptedServer, embeddings_body, rerank_body


def post(url: str, body: object | None = None, timeout: float = 5) -> tuple[int, dict, object]:
    data = json.dumps(body).encode() if body is not None else b""
    request = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": "application/json", "X-Test": "1"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read() or b"null")


def test_listens_on_loopback_with_v1_base_url(scripted_server):
    assert scripted_server.url == f"http://127.0.0.1:{scripted_server.port}"
    assert scripted_server.base_url == scripted_server.url + "/v1"


def test_queue_is_first_in_first_out_then_the_responder_answers(scripted_server):
    scripted_server.enqueue("/v1/things", status=503, body={"n": 1}, headers={"Retry-After": "2"})
    scripted_server.enqueue("things", Reply(body={"n": 2}))  # relative to /v1: the same route
    scripted_server.respond("things", lambda request: {"echo": request.json["x"]})

    answers = [post(scripted_server.base_url + "/things?page=1", {"x": i}) for i in range(3)]

    assert [(status, body) for status, _, body in answers] == [(503, {"n": 1}), (200, {"n": 2}), (200, {"echo": 2})]
    assert answers[0][1]["Retry-After"] == "2"
    first = scripted_server.requests[0]
    assert (first.method, first.path, first.query, first.json) == ("POST", "/v1/things", {"page": ["1"]}, {"x": 0})
    assert first.header("X-TEST") == "1"
    assert len(scripted_server.requests_to("/v1/things")) == 3 and scripted_server.pending("things") == 0


def test_unscripted_requests_get_404_and_are_listed(scripted_server):
    status, _, body = post(scripted_server.url + "/v2/rerank", {"query": "q"})
    assert status == 404 and "no scripted response for POST /v2/rerank" in body["error"]["message"]
    assert [r.path for r in scripted_server.unanswered] == ["/v2/rerank"]


def test_responder_returning_none_falls_back_and_a_broken_one_answers_500():
    with ScriptedServer(fallback=lambda request: {"fallback": request.path}) as server:
        server.respond("maybe", lambda request: None)
        server.respond("broken", lambda request: 1 / 0)
        assert post(server.base_url + "/maybe")[2] == {"fallback": "/v1/maybe"}
        assert post(server.base_url + "/broken")[0] == 500
        assert "ZeroDivisionError" in server.errors[0]


def test_max_in_flight_counts_overlapping_requests(scripted_server):
    scripted_server.enqueue("slow", body={}, delay=0.3, times=3)
    threads = [threading.Thread(target=post, args=(scripted_server.base_url + "/slow",)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert scripted_server.max_in_flight == 3 and scripted_server.in_flight == 0
    scripted_server.reset()
    assert scripted_server.requests == [] and scripted_server.max_in_flight == 0


def test_stop_does_not_wait_for_long_delays():
    server = ScriptedServer().start()
    server.enqueue("hang", body={}, delay=30)
    with pytest.raises(OSError):  # urllib's time-out
        post(server.base_url + "/hang", timeout=0.2)
    started = time.monotonic()
    server.stop()
    assert time.monotonic() - started < 2


def test_body_builders_have_the_api_shapes():
    assert embeddings_body([[1, 2]])["data"] == [{"object": "embedding", "index": 0, "embedding": [1.0, 2.0]}]
    assert rerank_body([(2, 0.9), (0, 0.1)])["results"] == [{"index": 2, "relevance_score": 0.9}, {"index": 0, "relevance_score": 0.1}]


def test_check_reports_unanswered_requests_errors_and_unused_replies(scripted_server):
    scripted_server.enqueue("used", body={})
    post(scripted_server.base_url + "/used")
    scripted_server.check()  # everything scripted was used, nothing unexpected

    scripted_server.enqueue("never-called", body={}, times=2)
    scripted_server.respond("broken", lambda request: 1 / 0)
    post(scripted_server.base_url + "/unexpected")
    post(scripted_server.base_url + "/broken")
    with pytest.raises(AssertionError) as raised:
        scripted_server.check()
    message = str(raised.value)
    assert "unanswered: POST /v1/unexpected" in message
    assert "ZeroDivisionError" in message
    assert "unused: 2 queued repl(ies) for /v1/never-called" in message


def test_a_body_that_cannot_be_sent_is_recorded_as_an_error(scripted_server):
    scripted_server.enqueue("bad", body={"not json": object()})
    with pytest.raises(Exception):  # noqa: B017 (whatever the HTTP client raises for a dropped connection)
        post(scripted_server.base_url + "/bad")
    assert any("TypeError" in error for error in scripted_server.errors)
