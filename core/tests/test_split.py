"""Token-aware splitting: sizes, overlap, sentence boundaries, Chinese, true offsets."""

from __future__ import annotations

import pytest
from heta_framework.builtin.text_split import count_tokens, split_text


def test_chunks_respect_size_and_overlap():
    text = " ".join(f"Sentence number {i} has exactly seven words." for i in range(100))
    spans = split_text(text, chunk_size=50, chunk_overlap=10)
    chunks = [text[s:e] for s, e in spans]
    assert all(count_tokens(c) <= 50 for c in chunks)
    assert all(c.endswith(".") for c in chunks), "chunks end at sentence boundaries"
    for previous, current in zip(chunks, chunks[1:]):
        overlap = previous[-60:]
        assert current.startswith(previous.split(". ")[-1].strip()) or overlap.split(". ")[-1] in current
    covered = set()
    for s, e in spans:
        covered.update(range(s, e))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace()), "no text is lost"


def test_chinese_is_split_by_characters_and_sentences():
    text = "上海是中国的经济中心。" * 40
    spans = split_text(text, chunk_size=30, chunk_overlap=5)
    chunks = [text[s:e] for s, e in spans]
    assert len(chunks) > 10
    assert all(count_tokens(c) <= 30 for c in chunks)
    assert all(c.endswith("。") for c in chunks)


def test_one_long_sentence_is_cut_at_token_boundaries():
    text = "word " * 1000
    spans = split_text(text, chunk_size=100, chunk_overlap=0)
    assert len(spans) == 10
    assert all(text[s:e].split() == ["word"] * 100 for s, e in spans)


def test_offsets_are_exact_slices():
    text = "Alpha beta.\n\nGamma delta epsilon! Zeta eta theta? Iota."
    for start, end in split_text(text, chunk_size=4, chunk_overlap=1):
        assert text[start:end] == text[start:end].strip() and text[start:end]


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_invalid_settings(size, overlap):
    with pytest.raises(ValueError):
        split_text("a b c", chunk_size=size, chunk_overlap=overlap)
