from __future__ import annotations

import asyncio

import pytest
from heta_framework.common.models import RerankClient, RerankModel
from heta_framework.errors import ModelError

from heta_plugin_rerank import LocalCrossEncoderReranker

QUERY = "where do whales live"
DOCUMENTS = [
    "the quick brown fox jumps",
    "whales are marine mammals of the ocean",
    "shanghai is a city in china",
    "foxes live in dens",
    "whales breathe air",
]


def reranker(folder, **options) -> LocalCrossEncoderReranker:
    # an absolute folder is written with two slashes: local//abs/path
    return LocalCrossEncoderReranker(RerankModel(model_name=f"local/{folder}", options=options))


def reference_scores(folder, query, documents) -> list[float]:
    """Scores computed with plain transformers, independently of the provider."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True).eval()
    batch = tokenizer([query] * len(documents), documents, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits[:, 0]
    return torch.sigmoid(logits).tolist()  # CrossEncoder's default for one-label models


async def test_ranks_by_the_models_own_scores(tiny_cross_encoder):
    client = reranker(tiny_cross_encoder)
    assert isinstance(client, RerankClient) and client.folder == tiny_cross_encoder

    hits = await client.rerank(QUERY, DOCUMENTS, top_n=len(DOCUMENTS))

    expected = reference_scores(tiny_cross_encoder, QUERY, DOCUMENTS)
    assert sorted(hit.index for hit in hits) == list(range(len(DOCUMENTS)))
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.index], abs=1e-5)
    assert [hit.index for hit in hits] == sorted(range(len(DOCUMENTS)), key=lambda i: -expected[i])


async def test_top_n_is_a_prefix_and_scores_are_deterministic(tiny_cross_encoder):
    client = reranker(tiny_cross_encoder, batch_size=2)

    everything = await client.rerank(QUERY, DOCUMENTS, top_n=10)  # more than there are documents
    top_two, again = await asyncio.gather(client.rerank(QUERY, DOCUMENTS, top_n=2), client.rerank(QUERY, DOCUMENTS, top_n=2))

    assert len(everything) == len(DOCUMENTS)
    assert top_two == everything[:2] == again
    assert await client.rerank(QUERY, [], top_n=3) == []
    assert await client.rerank(QUERY, DOCUMENTS, top_n=0) == []


async def test_a_missing_folder_is_a_clear_error_and_nothing_is_downloaded(tmp_path):
    client = reranker(tmp_path / "no-such-model")  # creating the client loads nothing

    with pytest.raises(ModelError, match=r"No cross-encoder folder at .*no-such-model.*never downloads"):
        await client.rerank(QUERY, DOCUMENTS, top_n=2)


async def test_a_hub_style_name_is_treated_as_a_relative_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    client = LocalCrossEncoderReranker(RerankModel(model_name="local/cross-encoder/ms-marco-MiniLM-L-6-v2"))

    assert client.folder == tmp_path / "cross-encoder" / "ms-marco-MiniLM-L-6-v2"
    with pytest.raises(ModelError, match="never downloads"):
        await client.rerank(QUERY, DOCUMENTS, top_n=1)


def test_unknown_option_is_a_clear_error(tiny_cross_encoder):
    with pytest.raises(ModelError, match=r"Unknown option\(s\) 'batchsize'.*batch_size"):
        reranker(tiny_cross_encoder, batchsize=4)


async def test_a_folder_saved_by_cross_encoder_loads_too(tiny_cross_encoder, tmp_path):
    from sentence_transformers import CrossEncoder

    saved = tmp_path / "saved-by-sentence-transformers"
    CrossEncoder(str(tiny_cross_encoder), local_files_only=True).save(str(saved))

    original = await reranker(tiny_cross_encoder).rerank(QUERY, DOCUMENTS, top_n=3)
    resaved = await reranker(saved).rerank(QUERY, DOCUMENTS, top_n=3)

    assert [h.index for h in resaved] == [h.index for h in original]
    assert [h.score for h in resaved] == pytest.approx([h.score for h in original], abs=1e-6)


async def test_a_folder_without_a_model_is_a_clear_error(tmp_path):
    (tmp_path / "empty-model").mkdir()
    with pytest.raises(ModelError, match="Could not load the cross-encoder in .*empty-model"):
        await reranker(tmp_path / "empty-model").rerank(QUERY, DOCUMENTS, top_n=1)
