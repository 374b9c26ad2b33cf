"""``embed_texts`` (build_graph, dedup, merge) keeps up to ``concurrency`` batches in flight against the real
openai client on 127.0.0.1, keeps the order of the texts, retries a failed batch and caches what finished."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from heta_framework.common.models import EmbeddingModel
from heta_framework.errors import ModelError
from heta_framework.kb.folder_state import SQLiteCache
from heta_framework.testing.http import Reply, embeddings_body, openai_error_body
from heta_plugin_graph.steps.build import BuildGraph
from heta_plugin_graph.vectors import GRAPH_CACHE_NAME, embed_texts

DELAY = 0.1  # seconds the server takes per request
NAMES = [f"Entity {n} (ORG)" for n in range(24)]


def number_of(text: str) -> float:
    return float(text.split()[1])


def answer(request):
    # each vector names its text, so a batch written to the wrong rows shows
    return Reply(body=embeddings_body([[number_of(t), 1.0, 0.5] for t in request.json["input"]]), delay=DELAY)


class CacheContext:
    """The two things embed_texts asks of a step context: a real SQLite cache and counters."""

    def __init__(self, path):
        self.caches: dict[str, SQLiteCache] = {}
        self.path = path
        self.stats: collections.Counter[str] = collections.Counter()

    def cache(self, name: str) -> SQLiteCache:
        if name not in self.caches:
            self.caches[name] = SQLiteCache(self.path / f"{name}.sqlite")
        return self.caches[name]

    def count(self, name: str, n: int = 1) -> None:
        self.stats[name] += n


def client(server):
    from heta_plugin_openai.embedding import OpenAIEmbeddingClient

    # the provider's own gate is wider than any bound tested, so the bound measured is embed_texts'
    return OpenAIEmbeddingClient(EmbeddingModel(
        model_name="openai/test-embedding", base_url=server.base_url, api_key="sk-test-key",
        options={"timeout": 5, "concurrency": 32, "batch_size": 4, "dimension": 3, "max_attempts": 3}))


@pytest.mark.parametrize("concurrency", [1, 3, 16])
async def test_batches_in_flight_follow_the_bound_and_keep_the_order(server, concurrency):
    server.respond("embeddings", answer)
    texts = NAMES + NAMES[:5]  # repeated texts are embedded once and handed back in place
    vectors = await embed_texts(client(server), texts, batch_size=4, concurrency=concurrency)
    assert vectors.dtype == np.float32 and vectors.shape == (len(texts), 3)
    assert vectors[:, 0].tolist() == [number_of(t) for t in texts]
    assert len(server.requests) == 6  # 24 distinct texts, 4 a batch
    assert server.max_in_flight == min(concurrency, 6)
    server.check()


async def test_a_failed_batch_is_retried(server):
    server.enqueue("embeddings", status=500, body=openai_error_body("overloaded", type="server_error"))
    server.respond("embeddings", answer)
    vectors = await embed_texts(client(server), NAMES, batch_size=4, concurrency=4)
    assert vectors[:, 0].tolist() == [number_of(t) for t in NAMES]
    assert len(server.requests) == 7  # six batches, one of them twice


async def test_a_batch_that_fails_for_good_raises_and_the_finished_ones_stay_cached(tmp_path, server):
    server.respond("embeddings", lambda request: Reply(status=400, body=openai_error_body("bad input"))
                   if "Entity 9 (ORG)" in request.json["input"] else answer(request))
    context = CacheContext(tmp_path)
    with pytest.raises(ModelError, match="400"):
        await embed_texts(client(server), NAMES, context=context, batch_size=4, concurrency=1)
    cached = len(context.cache(GRAPH_CACHE_NAME))
    assert cached == 8  # two batches finished before the third failed; the batches after it never ran
    server.respond("embeddings", answer)
    before = len(server.requests)
    vectors = await embed_texts(client(server), NAMES, context=context, batch_size=4, concurrency=4)
    assert vectors[:, 0].tolist() == [number_of(t) for t in NAMES]
    assert len(server.requests) - before == 4  # the cached two batches are not sent again
    assert context.stats["graph_cache_hits"] == 8


def test_build_graph_declares_the_bound():
    assert BuildGraph().concurrency == 4
    with pytest.raises(ValueError):
        BuildGraph(concurrency=0)
