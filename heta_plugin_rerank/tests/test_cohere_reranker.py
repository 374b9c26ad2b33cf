"""The Cohere reranker, with the real cohere client against the scripted server."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from heta_framework.common.models import RerankClient, RerankHit, RerankModel
from heta_framework.errors import ModelError, ModelTimeoutError
from heta_framework.testing.http import rerank_body

from heta_plugin_rerank import CohereRerankClient

DOCUMENTS = ["cats purr", "whales sing", "the ocean is deep", "dogs bark"]


@pytest.fixture
def cohere_model(scripted_server, api_key, fast_options):
    def make(**options) -> RerankModel:
        return RerankModel(
            model_name="cohere/rerank-v3.5", base_url=scripted_server.url, api_key=api_key, options={**fast_options, **options}
        )

    return make


async def test_rerank_returns_hits_best_first(scripted_server, cohere_model, api_key):
    # the server answers out of order; the client still returns best first
    scripted_server.enqueue("/v2/rerank", body=rerank_body([(2, 0.61), (1, 0.93)]))
    client = CohereRerankClient(cohere_model(max_tokens_per_doc=512))
    assert isinstance(client, RerankClient)

    hits = await client.rerank("whales in the sea", DOCUMENTS, top_n=2)

    assert hits == [RerankHit(index=1, score=0.93), RerankHit(index=2, score=0.61)]
    (request,) = scripted_server.requests
    assert request.path == "/v2/rerank"
    assert request.header("authorization") == f"Bearer {api_key}"
    assert request.json == {
        "model": "rerank-v3.5",
        "query": "whales in the sea",
        "documents": DOCUMENTS,
        "top_n": 2,
        "max_tokens_per_doc": 512,
    }


async def test_top_n_is_capped_and_empty_input_sends_nothing(scripted_server, cohere_model):
    scripted_server.respond("/v2/rerank", lambda r: rerank_body([(i, 1.0 / (i + 1)) for i in range(len(r.json["documents"]))]))
    client = CohereRerankClient(cohere_model())

    hits = await client.rerank("q", DOCUMENTS[:2], top_n=10)

    assert [h.index for h in hits] == [0, 1]
    assert scripted_server.requests[0].json["top_n"] == 2
    assert await client.rerank("q", [], top_n=5) == [] and await client.rerank("q", DOCUMENTS, top_n=0) == []
    assert len(scripted_server.requests) == 1


async def test_rate_limit_and_server_error_are_retried(scripted_server, cohere_model, caplog):
    scripted_server.enqueue("/v2/rerank", status=429, body={"message": "too many requests"}, headers={"Retry-After": "0.3"})
    scripted_server.enqueue("/v2/rerank", status=503, body={"message": "overloaded"})
    scripted_server.enqueue("/v2/rerank", body=rerank_body([(3, 0.5)]))

    started = time.monotonic()
    with caplog.at_level(logging.WARNING):
        hits = await CohereRerankClient(cohere_model()).rerank("q", DOCUMENTS, top_n=1)

    assert hits == [RerankHit(index=3, score=0.5)]
    assert len(scripted_server.requests) == 3
    assert time.monotonic() - started >= 0.3  # Retry-After was honoured
    assert "retry 2/3" in caplog.text


async def test_bad_request_is_not_retried_and_says_what_the_server_said(scripted_server, cohere_model):
    scripted_server.enqueue("/v2/rerank", status=400, body={"message": "invalid model"})

    with pytest.raises(ModelError, match=r"rejected rerank for cohere/rerank-v3.5 with status 400: invalid model"):
        await CohereRerankClient(cohere_model()).rerank("q", DOCUMENTS, top_n=1)

    assert len(scripted_server.requests) == 1


async def test_time_out_becomes_model_timeout_error(scripted_server, cohere_model):
    scripted_server.enqueue("/v2/rerank", body=rerank_body([(0, 1.0)]), delay=3, times=2)

    started = time.monotonic()
    with pytest.raises(ModelTimeoutError, match=r"did not answer within 0.2s, after 2 attempt\(s\)"):
        await CohereRerankClient(cohere_model(timeout=0.2, max_attempts=2)).rerank("q", DOCUMENTS, top_n=1)

    assert time.monotonic() - started < 2
    assert len(scripted_server.requests) == 2


async def test_concurrency_bound_holds_at_the_server(scripted_server, cohere_model):
    def slow(request):
        time.sleep(0.15)
        return rerank_body([(0, 1.0)])

    scripted_server.respond("/v2/rerank", slow)
    client = CohereRerankClient(cohere_model(concurrency=2))

    results = await asyncio.gather(*(client.rerank(f"q{i}", DOCUMENTS, top_n=1) for i in range(6)))

    assert len(results) == 6
    assert scripted_server.max_in_flight == 2 and client.peak_in_flight == 2


async def test_api_key_never_appears_in_errors_or_logs(scripted_server, cohere_model, api_key, caplog):
    scripted_server.enqueue("/v2/rerank", status=401, body={"message": f"invalid api token {api_key}"})
    scripted_server.enqueue("/v2/rerank", status=500, body={"message": f"internal error for token {api_key}"}, times=4)

    caplog.set_level(logging.DEBUG)
    errors = []
    for _ in range(2):
        with pytest.raises(ModelError) as raised:
            await CohereRerankClient(cohere_model()).rerank("q", DOCUMENTS, top_n=1)
        errors.append(raised.value)

    assert "rejected the API key" in str(errors[0])
    assert "internal error for token ***" in str(errors[1])
    for error in errors:
        assert api_key not in str(error) and api_key not in repr(error) and error.__cause__ is None
    assert api_key not in caplog.text
    assert api_key not in repr(cohere_model()) and api_key not in repr(CohereRerankClient(cohere_model()))


async def test_cohere_itself_needs_a_key_but_a_compatible_server_does_not(monkeypatch, scripted_server):
    monkeypatch.setenv("CO_API_KEY", "co-env-key-must-not-leave")
    scripted_server.enqueue("/v2/rerank", body=rerank_body([(0, 1.0)]))
    await CohereRerankClient(RerankModel(model_name="cohere/bge-reranker", base_url=scripted_server.url)).rerank("q", ["a"], 1)
    assert scripted_server.requests[0].header("authorization") == "Bearer heta-no-key"

    monkeypatch.delenv("CO_API_KEY")
    client = CohereRerankClient(RerankModel(model_name="cohere/rerank-v3.5"))  # creating it touches nothing
    with pytest.raises(ModelError, match="No API key for cohere/rerank-v3.5.*CO_API_KEY"):
        await client.rerank("q", ["a"], 1)
