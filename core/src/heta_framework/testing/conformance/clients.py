"""Suites for model clients: ``EmbeddingClientSuite``, ``LanguageClientSuite``, ``RerankClientSuite``.

Each needs one fixture, the client under test. Calls run with ``asyncio.run``
inside plain test functions, so no asyncio pytest plugin is needed. A client
talking to a server is tested against a local one (``heta_framework.testing.http``)
scripted by the subclass.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from heta_framework.common.models import Completion, EmbeddingClient, LanguageClient, Message, RerankClient, RerankHit
from heta_framework.testing.conformance.samples import HOSTILE_STRINGS, UNICODE_TEXTS

TEXTS = ("The quick brown fox jumps over the lazy dog.", "Whales are marine mammals.", *HOSTILE_STRINGS, *UNICODE_TEXTS.values())


class EmbeddingClientSuite:
    """Provide ``embedding_client``. Set ``judges_similarity = True`` for a real model (related texts are closer)."""

    judges_similarity = False

    @pytest.fixture
    def embedding_client(self) -> EmbeddingClient:
        raise NotImplementedError("provide an `embedding_client` fixture")

    def embed(self, client: Any, texts: Sequence[str]) -> np.ndarray:
        return asyncio.run(client.embed(list(texts)))

    def test_vectors_are_float32_one_row_per_text(self, embedding_client):
        vectors = self.embed(embedding_client, TEXTS)
        assert isinstance(embedding_client, EmbeddingClient)  # after one call: some learn their dimension from it
        assert isinstance(embedding_client.model_name, str) and "/" in embedding_client.model_name
        assert isinstance(vectors, np.ndarray) and vectors.dtype == np.float32
        assert vectors.shape == (len(TEXTS), embedding_client.dimension) and embedding_client.dimension > 0
        assert np.isfinite(vectors).all() and (np.linalg.norm(vectors, axis=1) > 0).all()

    def test_no_texts_no_vectors(self, embedding_client):
        self.embed(embedding_client, ["warm up"])
        empty = self.embed(embedding_client, [])
        assert empty.shape == (0, embedding_client.dimension)

    def test_rows_keep_input_order_and_do_not_depend_on_the_batch(self, embedding_client):
        together = self.embed(embedding_client, TEXTS)
        alone = np.concatenate([self.embed(embedding_client, [text]) for text in TEXTS[:4]])
        np.testing.assert_allclose(together[:4], alone, atol=1e-4)
        np.testing.assert_allclose(self.embed(embedding_client, list(reversed(TEXTS))), together[::-1], atol=1e-4)

    def test_large_batch(self, embedding_client):
        texts = [f"sentence number {i} about {TEXTS[i % len(TEXTS)]}" for i in range(300)]
        vectors = self.embed(embedding_client, texts)
        assert vectors.shape == (300, embedding_client.dimension)
        np.testing.assert_allclose(vectors[[0, 150, 299]], self.embed(embedding_client, [texts[0], texts[150], texts[299]]), atol=1e-4)

    def test_concurrent_calls_agree_with_sequential_ones(self, embedding_client):
        groups = [[TEXTS[i], TEXTS[(i + 1) % len(TEXTS)]] for i in range(8)]
        sequential = [self.embed(embedding_client, g) for g in groups]

        async def together() -> list[Any]:
            return await asyncio.gather(*(embedding_client.embed(g) for g in groups))

        for got, expected in zip(asyncio.run(together()), sequential):
            np.testing.assert_allclose(got, expected, atol=1e-4)

    def test_related_texts_are_closer(self, embedding_client):
        if not self.judges_similarity:
            pytest.skip("this client's vectors are not meant to carry meaning (judges_similarity = False)")
        cat, kitten, tax = self.embed(embedding_client, ["a cat sleeps on the sofa", "a kitten naps on the couch", "corporate tax law reform"])

        def cosine(a: Any, b: Any) -> float:
            return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

        assert cosine(cat, kitten) > cosine(cat, tax)

    # --- only for clients that embed search queries their own way (``embed_queries``) ---------------

    def embed_queries(self, client: Any, texts: Sequence[str]) -> np.ndarray:
        if not hasattr(client, "embed_queries"):
            pytest.skip("this client embeds queries and passages alike (no embed_queries)")
        return asyncio.run(client.embed_queries(list(texts)))

    def test_query_vectors_have_the_passage_shape_and_keep_order(self, embedding_client):
        queries = self.embed_queries(embedding_client, TEXTS)
        assert isinstance(queries, np.ndarray) and queries.dtype == np.float32
        assert queries.shape == (len(TEXTS), embedding_client.dimension) and np.isfinite(queries).all()
        alone = np.concatenate([self.embed_queries(embedding_client, [text]) for text in TEXTS[:4]])
        np.testing.assert_allclose(queries[:4], alone, atol=1e-4)
        assert self.embed_queries(embedding_client, []).shape == (0, embedding_client.dimension)

    def test_a_query_finds_its_passage(self, embedding_client):
        if not self.judges_similarity:
            pytest.skip("this client's vectors are not meant to carry meaning (judges_similarity = False)")
        (query,) = self.embed_queries(embedding_client, ["where does the cat sleep?"])
        passages = self.embed(embedding_client, ["A cat sleeps on the sofa.", "Corporate tax law was reformed."])
        assert float(passages[0] @ query) > float(passages[1] @ query)


class LanguageClientSuite:
    """Provide ``language_client``; override ``expected_reply`` when the backend's answer is known (a scripted server)."""

    @pytest.fixture
    def language_client(self) -> LanguageClient:
        raise NotImplementedError("provide a `language_client` fixture")

    def expected_reply(self, messages: Sequence[Message], json_schema: Any = None) -> str | None:
        """What the backend answers to ``messages`` (asked for ``json_schema``); ``None``: any text is right."""
        return None

    def complete(self, client: Any, messages: Sequence[Message], **options: Any) -> Completion:
        return asyncio.run(client.complete(list(messages), **options))

    def check(self, completion: Any, messages: Sequence[Message], json_schema: Any = None) -> None:
        assert isinstance(completion, Completion)
        assert isinstance(completion.text, str)
        assert isinstance(completion.prompt_tokens, int) and completion.prompt_tokens >= 0
        assert isinstance(completion.completion_tokens, int) and completion.completion_tokens >= 0
        expected = self.expected_reply(messages, json_schema)
        if expected is not None:
            assert completion.text == expected

    def test_satisfies_the_protocol(self, language_client):
        assert isinstance(language_client, LanguageClient)
        assert isinstance(language_client.model_name, str) and "/" in language_client.model_name

    def test_a_conversation_with_every_role(self, language_client):
        messages = [Message("system", "Answer briefly."), Message("user", "Name a colour."), Message("assistant", "Blue."),
                    Message("user", "Another one?")]
        self.check(self.complete(language_client, messages), messages)

    def test_hostile_and_unicode_messages(self, language_client):
        for text in (*HOSTILE_STRINGS, *UNICODE_TEXTS.values()):
            messages = [Message("user", text)]
            self.check(self.complete(language_client, messages, max_tokens=16), messages)

    def test_json_schema_answers_parse(self, language_client):
        schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
        messages = [Message("user", 'Reply with JSON: {"answer": "..."}')]
        completion = self.complete(language_client, messages, json_schema=schema)
        self.check(completion, messages, schema)
        assert isinstance(json.loads(completion.text), dict)

    def test_concurrent_calls(self, language_client):
        conversations = [[Message("user", f"question {i} {UNICODE_TEXTS['zh']}")] for i in range(6)]

        async def together() -> list[Any]:
            return await asyncio.gather(*(language_client.complete(c) for c in conversations))

        for completion, messages in zip(asyncio.run(together()), conversations):
            self.check(completion, messages)


class RerankClientSuite:
    """Provide ``rerank_client``. Set ``judges_relevance = False`` for a model whose scores mean nothing (random weights)."""

    judges_relevance = True

    @pytest.fixture
    def rerank_client(self) -> RerankClient:
        raise NotImplementedError("provide a `rerank_client` fixture")

    def rerank(self, client: Any, query: str, documents: Sequence[str], top_n: int) -> list[RerankHit]:
        return asyncio.run(client.rerank(query, list(documents), top_n))

    def check(self, hits: list[Any], documents: Sequence[str], top_n: int) -> None:
        assert all(isinstance(h, RerankHit) for h in hits)
        assert len(hits) == min(top_n, len(documents))
        indexes = [h.index for h in hits]
        assert len(set(indexes)) == len(indexes) and all(0 <= i < len(documents) for i in indexes)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    def test_satisfies_the_protocol(self, rerank_client):
        assert isinstance(rerank_client, RerankClient)
        assert isinstance(rerank_client.model_name, str) and "/" in rerank_client.model_name

    def test_top_n_hits_best_first(self, rerank_client):
        documents = ["Whales are marine mammals that breathe air.", "The quick brown fox jumps over the lazy dog.",
                     "Paris is the capital of France.", "Foxes are clever animals that live in dens."]
        for top_n in (1, 2, 4, 10):
            self.check(self.rerank(rerank_client, "where do foxes live", documents, top_n), documents, top_n)
        if self.judges_relevance:
            assert self.rerank(rerank_client, "Paris capital France", documents, 1)[0].index == 2

    def test_nothing_to_rank(self, rerank_client):
        assert self.rerank(rerank_client, "anything", [], 5) == []
        assert self.rerank(rerank_client, "anything", ["one document"], 0) == []

    def test_hostile_and_unicode_documents(self, rerank_client):
        documents = list(HOSTILE_STRINGS) + list(UNICODE_TEXTS.values())
        self.check(self.rerank(rerank_client, "'; DROP TABLE documents; --", documents, 5), documents, 5)
        self.check(self.rerank(rerank_client, UNICODE_TEXTS["zh"], documents, len(documents)), documents, len(documents))

    def test_large_batch(self, rerank_client):
        documents = [f"document {i} about {TEXTS[i % len(TEXTS)]}" for i in range(200)]
        self.check(self.rerank(rerank_client, "marine mammals", documents, 20), documents, 20)

    def test_concurrent_calls_agree_with_sequential_ones(self, rerank_client):
        documents = list(TEXTS[:6])
        queries = ["fox", "whale", "Paris", "上海", "Москва", "dog"]
        sequential = [[h.index for h in self.rerank(rerank_client, q, documents, 3)] for q in queries]

        async def together() -> list[Any]:
            return await asyncio.gather(*(rerank_client.rerank(q, documents, 3) for q in queries))

        assert [[h.index for h in hits] for hits in asyncio.run(together())] == sequential
