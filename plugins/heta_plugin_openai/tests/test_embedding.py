from __future__ import annotations

import numpy as np
import pytest
from heta_framework.common.models import EmbeddingClient
from heta_framework.errors import ModelError
from heta_framework.testing.http import embeddings_body
from heta_plugin_openai import OpenAIEmbeddingClient


def vector_for(text: str) -> list[float]:
    """A deterministic 3-d vector per text, so answers can be checked against inputs."""
    return [float(len(text)), float(ord(text[0])), 1.0]


def answer_embeddings(request):
    return embeddings_body([vector_for(text) for text in request.json["input"]])


async def test_embeddings_are_batched_and_kept_in_order(scripted_server, embedding_model):
    scripted_server.respond("embeddings", answer_embeddings)
    client = OpenAIEmbeddingClient(embedding_model(batch_size=4))
    texts = [f"text number {i}" + "x" * i for i in range(10)]

    vectors = await client.embed(texts)

    assert vectors.dtype == np.float32 and vectors.shape == (10, 3)
    np.testing.assert_array_equal(vectors, np.asarray([vector_for(t) for t in texts], dtype=np.float32))
    batches = [r.json["input"] for r in scripted_server.requests_to("embeddings")]
    assert sorted(map(len, batches)) == [2, 4, 4]
    assert sorted(t for batch in batches for t in batch) == sorted(texts)
    assert all(r.json["model"] == "test-embedding" and r.json["encoding_format"] == "float" for r in scripted_server.requests)
    assert client.dimension == 3  # learned from the first answer
    assert isinstance(client, EmbeddingClient)  # (the protocol check reads .dimension, known only now)


async def test_items_returned_out_of_order_are_put_back_by_index(scripted_server, embedding_model):
    body = embeddings_body([[1, 0], [0, 1]])
    body["data"].reverse()
    scripted_server.enqueue("embeddings", body=body)

    vectors = await OpenAIEmbeddingClient(embedding_model()).embed(["a", "b"])

    np.testing.assert_array_equal(vectors, [[1, 0], [0, 1]])


def test_dimension_before_first_call_needs_the_option(embedding_model):
    with pytest.raises(ModelError, match="options.dimension"):
        _ = OpenAIEmbeddingClient(embedding_model()).dimension
    assert OpenAIEmbeddingClient(embedding_model(dimension=3)).dimension == 3


async def test_declared_dimension_is_sent_when_asked_and_checked(scripted_server, embedding_model):
    scripted_server.enqueue("embeddings", body=embeddings_body([[1.0, 2.0]]))
    client = OpenAIEmbeddingClient(embedding_model(dimension=3, send_dimensions=True))

    with pytest.raises(ModelError, match=r"shape \(1, 2\), expected \(n, 3\)"):
        await client.embed(["a"])

    assert scripted_server.requests[0].json["dimensions"] == 3


async def test_empty_input_makes_no_request(scripted_server, embedding_model):
    vectors = await OpenAIEmbeddingClient(embedding_model(dimension=3)).embed([])
    assert vectors.shape == (0, 3) and scripted_server.requests == []


async def test_missing_embeddings_are_an_error_that_suggests_smaller_batches(scripted_server, embedding_model):
    scripted_server.enqueue("embeddings", body=embeddings_body([[1.0, 2.0]]))
    with pytest.raises(ModelError, match="batch_size"):
        await OpenAIEmbeddingClient(embedding_model()).embed(["a", "b"])
