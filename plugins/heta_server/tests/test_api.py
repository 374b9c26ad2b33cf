"""The HTTP API through a real uvicorn on 127.0.0.1 and a real httpx client: every mode, Hebb search, errors, limits."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from heta_framework.cli.querying import mode_rows
from heta_framework.kb.search import QueryResponse


def test_health_and_openapi(served):
    with served.client() as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        schema = client.get("/openapi.json").json()
    assert {"/api/v1/query", "/api/v1/search", "/api/v1/modes", "/api/v1/documents", "/api/v1/jobs/{job_id}"} <= set(schema["paths"])
    search = schema["components"]["schemas"]["SearchBody"]["properties"]
    assert {"query", "top_k", "weight_recency", "weight_importance", "weight_relevance"} <= set(search)


def test_modes_are_the_rows_heta_modes_prints(served):
    with served.client() as client:
        rows = client.get("/api/v1/modes").json()["modes"]
    assert rows == mode_rows(served.kb)
    assert {r["mode"] for r in rows if r["available"]} == set(served.kb.available_queries)


def test_every_available_mode_answers_with_the_python_shape(served):
    question = "Who discovered penicillin?"
    with served.client() as client:
        for mode in served.kb.available_queries:
            reply = client.post("/api/v1/query", json={"text": question, "mode": mode, "top_k": 3, "trace": True})
            assert reply.status_code == 200, (mode, reply.text)
            data = reply.json()
            parsed = QueryResponse.from_dict(data)  # the same JSON as QueryResponse.to_dict()
            assert parsed.metadata["mode"] == mode
            assert parsed.results, mode
            assert parsed.trace is not None and parsed.trace.mode == mode
            assert 1 <= len(parsed.results) <= 3


def test_query_filters_and_options_reach_the_engine(served):
    with served.client() as client:
        reply = client.post("/api/v1/query", json={
            "text": "Fleming", "mode": "full_text_search", "top_k": 5, "filters": {"document_id": "fleming"},
        })
        assert {r["metadata"]["document_id"] for r in reply.json()["results"]} == {"fleming"}
        fused = client.post("/api/v1/query", json={"text": "penicillin", "mode": "hybrid_search", "options": {"rrf_k": 10}}).json()
    assert fused["metadata"]["fusion"]["rrf_k"] == 10


def test_hebb_search_has_the_spec_shape(served):
    body = {"query": "Who discovered penicillin?", "top_k": 2, "weight_recency": 0.5, "weight_importance": 1.5, "weight_relevance": 1.0}
    with served.client() as client:
        data = client.post("/api/v1/search", json=body).json()
    assert set(data) >= {"results", "related"}
    assert len(data["results"]) == 2
    for result in data["results"]:
        assert {"memory", "score", "recency_score", "importance_score_normalized", "relevance_score"} <= set(result)
        assert {"id", "content"} <= set(result["memory"])
        expected = (0.5 * result["recency_score"] + 1.5 * result["importance_score_normalized"] + result["relevance_score"]) / 3
        assert result["score"] == pytest.approx(expected)
    top = data["results"][0]["memory"]
    assert top["document_id"] == "penicillin" and top["importance"] == 9
    assert data["results"][0]["importance_score_normalized"] == 0.9
    assert all({"id", "content"} <= set(r) for r in data["related"])


@pytest.mark.parametrize("body, status, code", [
    ({"text": "x", "mode": "no_such_mode"}, 404, "UnknownNameError"),
    ({"text": "x", "mode": "sql_text_search"}, 409, "ModeUnavailableError"),
    ({"text": "x", "mode": "vector_search", "options": {"rrf_k": 1}}, 422, "InvalidQueryError"),
    ({"text": "x", "mode": "vector_search", "top_k": 0}, 422, "InvalidQueryError"),
    ({"text": "x", "mode": "vector_search", "top_k": 10**8}, 422, "InvalidQueryError"),
    ({"text": "x", "mode": "vector_search", "top_k": 2**70}, 422, "InvalidQueryError"),
    ({"text": "x\u0000y", "mode": "vector_search"}, 422, "InvalidQueryError"),
    ({"text": "x", "filters": {"name": {"nested": 1}}}, 422, "InvalidQueryError"),
    ({"mode": "vector_search"}, 422, "InvalidRequest"),
    ({"text": "x", "unknown_field": 1}, 422, "InvalidRequest"),
])
def test_errors_are_json_with_the_python_codes(served, body, status, code):
    with served.client() as client:
        reply = client.post("/api/v1/query", json=body)
    assert reply.status_code == status
    assert reply.headers["content-type"] == "application/json"
    error = reply.json()["error"]
    assert error["code"] == code and error["message"]
    assert "Traceback" not in reply.text


def test_bad_hebb_weights_and_unknown_paths_are_json_errors(served):
    with served.client() as client:
        zero = client.post("/api/v1/search", json={"query": "x", "weight_recency": 0, "weight_importance": 0, "weight_relevance": 0})
        missing = client.get("/api/v1/nothing-here")
        document = client.get("/api/v1/documents/no-such-document")
        not_json = client.post("/api/v1/query", content=b"{not json", headers={"content-type": "application/json"})
    assert (zero.status_code, zero.json()["error"]["code"]) == (422, "InvalidQueryError")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "NotFound")
    assert (document.status_code, document.json()["error"]["code"]) == (404, "UnknownDocument")
    assert (not_json.status_code, not_json.json()["error"]["code"]) == (422, "InvalidRequest")


def test_a_body_that_is_not_utf8_or_nests_too_deep_is_invalid_request(served):
    deep = b'{"text": "x", "filters": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}"
    with served.client() as client:
        latin1 = client.post("/api/v1/query", content='{"text": "caf\u00e9"}'.encode("latin-1"), headers={"content-type": "application/json"})
        nested = client.post("/api/v1/query", content=deep, headers={"content-type": "application/json"})
        still = client.post("/api/v1/query", json={"text": "penicillin", "mode": "full_text_search"})
    for reply in (latin1, nested):
        assert (reply.status_code, reply.json()["error"]["code"]) == (422, "InvalidRequest"), reply.text[:300]
        assert "Traceback" not in reply.text
    assert still.status_code == 200  # the server goes on


def test_an_oversize_body_is_refused_declared_or_streamed(served):
    big = b'{"text": "' + b"a" * 1_200_000 + b'"}'
    with served.client() as client:
        declared = client.post("/api/v1/query", content=big, headers={"content-type": "application/json"})

        def chunks():
            for start in range(0, len(big), 65536):
                yield big[start : start + 65536]

        streamed = client.post("/api/v1/query", content=chunks(), headers={"content-type": "application/json"})
        still_fine = client.post("/api/v1/query", json={"text": "penicillin", "mode": "full_text_search"})
    for reply in (declared, streamed):
        assert reply.status_code == 413
        assert reply.json()["error"]["code"] == "PayloadTooLarge"
    assert "transfer-encoding" not in declared.request.headers  # the first one did declare its length
    assert streamed.request.headers.get("transfer-encoding") == "chunked"
    assert still_fine.status_code == 200


async def test_queries_run_concurrently(served):
    async with httpx.AsyncClient(base_url=served.url, timeout=60) as client:
        modes = ["vector_search", "full_text_search", "heta_graph_search", "hybrid_search", "memory_search"] * 4
        replies = await asyncio.gather(*(
            client.post("/api/v1/query", json={"text": "penicillin and Fleming", "mode": m, "options": {"update_access": False} if m == "memory_search" else {}})
            for m in modes
        ))
    assert [r.status_code for r in replies] == [200] * len(modes)
    assert all(r.json()["results"] for r in replies)


def test_no_api_key_in_any_response(served):
    with served.client() as client:
        texts = [client.get("/api/v1/modes").text, client.get("/api/v1/documents").text, client.get("/openapi.json").text]
    for secret in served.kb.secrets():
        assert all(secret.reveal() not in text for text in texts)
