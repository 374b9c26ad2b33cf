"""QueryMemo.embed_many: several texts, one model call, shared with embed() in the same request."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from heta_framework.kb.query_memo import QueryMemo


class CountingEmbedder:
    model_name = "counting/test"

    def __init__(self, fail: bool = False):
        self.calls: list[list[str]] = []
        self.fail = fail

    async def embed(self, texts):
        self.calls.append(list(texts))
        await asyncio.sleep(0)
        if self.fail:
            raise ConnectionError("embedding server went away")
        return np.array([[float(len(t)), float(sum(map(ord, t)) % 97)] for t in texts], dtype=np.float32)


async def test_one_call_for_the_missing_texts_and_none_for_a_later_single_text():
    memo, client = QueryMemo(), CountingEmbedder()
    vectors = await memo.embed_many(client, ["query", "low keywords", "query", "high keywords"])
    assert client.calls == [["query", "low keywords", "high keywords"]]
    assert np.array_equal(vectors[0], vectors[2]) and vectors[1][0] == len("low keywords")
    single = await memo.embed(client, "low keywords")  # vector_search later in the same request
    assert np.array_equal(single, vectors[1]) and len(client.calls) == 1
    await memo.embed_many(client, ["query", "other"])
    assert client.calls[-1] == ["other"] and memo.embedding_calls == 2


async def test_a_failure_reaches_the_caller_and_is_not_remembered():
    memo, failing = QueryMemo(), CountingEmbedder(fail=True)
    with pytest.raises(ConnectionError):
        await memo.embed_many(failing, ["a", "b"])
    failing.fail = False
    assert len(await memo.embed_many(failing, ["a", "b"])) == 2
    assert failing.calls == [["a", "b"], ["a", "b"]]


class QueryPrefixEmbedder(CountingEmbedder):
    """A model that embeds queries its own way (as E5 does with ``query: ``)."""

    def __init__(self):
        super().__init__()
        self.query_calls: list[list[str]] = []

    async def embed_queries(self, texts):
        self.query_calls.append(list(texts))
        return await self.embed([f"query: {t}" for t in texts])


async def test_query_vectors_come_from_embed_queries_when_the_client_has_it():
    memo, client = QueryMemo(), QueryPrefixEmbedder()
    single = await memo.embed(client, "whales")
    many = await memo.embed_many(client, ["whales", "ocean"])
    assert client.query_calls == [["whales"], ["ocean"]]  # every query-time embedding, the batch path too
    assert single[0] == len("query: whales") and np.array_equal(many[0], single)
    assert many[1][0] == len("query: ocean")
