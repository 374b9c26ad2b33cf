from __future__ import annotations

import os
from pathlib import Path

from heta_framework.testing import import_installed

import_installed("heta_plugin_rerank")

import pytest  # noqa: E402
from heta_framework.testing.http import scripted_server  # noqa: E402, F401  (the shared fixture)

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # belt and braces: these tests never reach a hub

API_KEY = "co-test-SECRET-9b1e77d2"
FAST = {"retry_initial_delay": 0.01, "retry_max_delay": 0.05, "timeout": 5}

WORDS = (
    "the a of and is are in on to what where who how "
    "fox foxes dog dogs whale whales ocean sea marine mammal mammals blowhole air breathe "
    "quick brown lazy jumps clever animals live dens city river shanghai china capital paris france"
).split()


@pytest.fixture
def api_key() -> str:
    return API_KEY


@pytest.fixture
def fast_options() -> dict:
    return dict(FAST)


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory) -> Path:
    """A tiny BERT sequence classifier with a word-level vocabulary, saved to a folder.

    Its weights are random (seeded), so its scores mean nothing, but it is a real
    model that the provider loads through its own code path, with no download.
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-cross-encoder")
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n")
    tokenizer = BertTokenizer(str(vocab), do_lower_case=True)
    config = BertConfig(
        vocab_size=len(WORDS) + 5,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=1,
        initializer_range=0.5,  # wide random weights, so that scores differ clearly between documents
    )
    torch.manual_seed(1234)
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
