"""Keyword extraction through the real openai client against the scripted server: every path, with call counts."""

from __future__ import annotations

import asyncio
import json

from heta_framework.testing.http import Reply, chat_completion_body, last_user_message

ROUTE = "chat/completions"
VALID = {"high_level_keywords": ["marine feeding"], "low_level_keywords": ["blue whales", "krill"]}


def answer(value) -> dict:
    return chat_completion_body(value if isinstance(value, str) else json.dumps(value))


def issue_codes(response) -> list[str]:
    return [issue["code"] for issue in response.metadata.get("issues", [])]


async def test_valid_answer_one_call_per_query_and_none_on_a_repeat(llm_kb, server):
    kb = await llm_kb()
    assert server.requests_to(ROUTE) == []  # the nlp graph needs no language model to build
    server.respond(ROUTE, lambda request: answer(VALID))
    first = await kb.query("What do blue whales eat?", mode="lightrag_hybrid", top_k=5)
    assert len(server.requests_to(ROUTE)) == 1
    assert first.metadata["keywords"] == {**VALID, "source": "language_model"}
    assert "What do blue whales eat?" in last_user_message(server.requests_to(ROUTE)[0])
    assert "krill" in " ".join(r.text for r in first.results).casefold()  # the model's keywords steered the search
    for mode in ("lightrag_local", "lightrag_global", "lightrag_mix", "lightrag_hybrid"):
        repeat = await kb.query("What do blue whales eat?", mode=mode, top_k=5)
        assert repeat.metadata["keywords"]["source"] == "cache" and not issue_codes(repeat)
    assert len(server.requests_to(ROUTE)) == 1  # cached by query text, across modes
    await kb.query("Who won the Nobel Prize?", mode="lightrag_local", top_k=5)
    assert len(server.requests_to(ROUTE)) == 2  # a new text is a new call


async def test_cache_survives_a_new_process_view_of_the_kb(llm_kb, server, registry):
    kb = await llm_kb()
    server.respond(ROUTE, lambda request: answer(VALID))
    await kb.query("What do blue whales eat?", mode="lightrag_local", top_k=5)
    kb.close()
    from heta_framework.kb import KnowledgeBase

    reopened = KnowledgeBase.load(kb.path, registry=registry)
    again = await reopened.query("What do blue whales eat?", mode="lightrag_local", top_k=5)
    assert again.metadata["keywords"]["source"] == "cache"
    assert len(server.requests_to(ROUTE)) == 1
    assert (kb.path / "lightrag_keywords.sqlite").exists()


async def test_invalid_then_valid_retries_once_with_the_error(llm_kb, server):
    kb = await llm_kb()
    server.enqueue(ROUTE, body=answer("sure! the keywords are whales"))
    server.enqueue(ROUTE, body=answer(VALID))
    response = await kb.query("What do blue whales eat?", mode="lightrag_local", top_k=5)
    requests = server.requests_to(ROUTE)
    assert len(requests) == 2
    assert "invalid" in last_user_message(requests[1])  # the retry says what was wrong
    assert response.metadata["keywords"]["low_level_keywords"] == VALID["low_level_keywords"]
    assert not issue_codes(response)


async def test_always_invalid_falls_back_offline_with_a_code_and_is_not_asked_again(llm_kb, server):
    kb = await llm_kb()
    server.respond(ROUTE, lambda request: answer({"high_level_keywords": "not a list", "low_level_keywords": []}))
    response = await kb.query("Which prize did Marie Curie win?", mode="lightrag_local", top_k=5)
    assert len(server.requests_to(ROUTE)) == 2  # the answer and one retry
    assert issue_codes(response) == ["lightrag_keywords_invalid"]
    assert response.metadata["keywords"]["source"] == "offline"
    assert "Marie Curie" in response.metadata["keywords"]["low_level_keywords"]
    assert response.results  # the search still ran
    repeat = await kb.query("Which prize did Marie Curie win?", mode="lightrag_local", top_k=5)
    assert len(server.requests_to(ROUTE)) == 2 and issue_codes(repeat) == ["lightrag_keywords_invalid"]


async def test_rate_limited_falls_back_and_is_retried_on_the_next_query(llm_kb, server):
    kb = await llm_kb(max_attempts=1)
    server.respond(ROUTE, lambda request: Reply(status=429, body={"error": {"message": "slow down"}}, headers={"Retry-After": "0"}))
    response = await kb.query("What do blue whales eat?", mode="lightrag_hybrid", top_k=5)
    assert len(server.requests_to(ROUTE)) == 1
    assert issue_codes(response) == ["lightrag_keywords_failed"]
    assert response.results and response.metadata["keywords"]["source"] == "offline"
    assert "sk-test" not in json.dumps(response.metadata, default=str)
    server.reset()
    server.respond(ROUTE, lambda request: answer(VALID))
    recovered = await kb.query("What do blue whales eat?", mode="lightrag_hybrid", top_k=5)
    assert len(server.requests_to(ROUTE)) == 1  # a failed call is not cached
    assert recovered.metadata["keywords"]["source"] == "language_model" and not issue_codes(recovered)


async def test_time_out_falls_back_with_a_code(llm_kb, server):
    kb = await llm_kb(max_attempts=1, timeout=0.3)
    server.respond(ROUTE, lambda request: Reply(body=answer(VALID), delay=3.0))
    response = await kb.query("What do blue whales eat?", mode="lightrag_global", top_k=5)
    assert len(server.requests_to(ROUTE)) == 1
    assert issue_codes(response) == ["lightrag_keywords_failed"]
    assert response.results


async def test_concurrent_identical_queries_share_one_call(llm_kb, server):
    kb = await llm_kb()
    server.respond(ROUTE, lambda request: Reply(body=answer(VALID), delay=0.3))
    responses = await asyncio.gather(*(kb.query("What do blue whales eat?", mode=m, top_k=5)
                                       for m in ("lightrag_local", "lightrag_global", "lightrag_hybrid")))
    assert len(server.requests_to(ROUTE)) == 1
    assert all(r.metadata["keywords"]["low_level_keywords"] == VALID["low_level_keywords"] for r in responses)


async def test_one_embedding_call_per_request(llm_kb, server, monkeypatch):
    kb = await llm_kb()
    server.respond(ROUTE, lambda request: answer(VALID))
    client = kb.get_component("models.embedding")
    calls: list[list[str]] = []
    real = client.embed

    async def counted(texts, *args, **kwargs):
        calls.append(list(texts))
        return await real(texts, *args, **kwargs)

    monkeypatch.setattr(client, "embed", counted)
    await kb.query("What do blue whales eat?", mode="lightrag_mix", top_k=5)
    # the query (for vector_search) and both keyword lists, in one call
    assert calls == [["What do blue whales eat?", "blue whales, krill", "marine feeding"]]


async def test_a_cancelled_query_does_not_cancel_the_one_sharing_its_call(llm_kb, server):
    kb = await llm_kb()
    server.respond(ROUTE, lambda request: Reply(body=answer(VALID), delay=0.4))
    first = asyncio.create_task(kb.query("What do blue whales eat?", mode="lightrag_local", top_k=5))
    await asyncio.sleep(0.15)
    second = asyncio.create_task(kb.query("What do blue whales eat?", mode="lightrag_global", top_k=5))
    await asyncio.sleep(0.15)
    first.cancel()
    response = await second
    assert first.cancelled()
    assert response.metadata["keywords"]["source"] == "language_model" and not issue_codes(response)
    assert len(server.requests_to(ROUTE)) == 2  # the waiter asked itself once the call it shared was cancelled
