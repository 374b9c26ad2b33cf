"""Token-aware splitting that respects sentences, for English and Chinese alike, with no tokenizer download.

A token is a word (letters/digits) or a single CJK character, which tracks
sub-word tokenizers well enough to size chunks for embedding models.
Chunks are exact slices of the text, so their character offsets are true.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(f"[{_CJK}]|[^\\W_]+", re.UNICODE)
# a sentence ends after ., !, ? followed by space, after CJK end punctuation, or at a line break
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+|(?<=[。！？；])|\n+")


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def _segments(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > start:
            yield start, end
            start = end
    if start < len(text):
        yield start, len(text)


def _split_long(text: str, start: int, end: int, size: int) -> Iterator[tuple[int, int, int]]:
    """Cut one over-long segment at token boundaries into pieces of ``size`` tokens."""
    tokens = [m.span() for m in _TOKEN.finditer(text, start, end)]
    for i in range(0, len(tokens), size):
        window = tokens[i : i + size]
        piece_start = start if i == 0 else window[0][0]
        piece_end = end if i + size >= len(tokens) else tokens[i + size][0]
        yield piece_start, piece_end, len(window)


def split_text(text: str, chunk_size: int = 200, chunk_overlap: int = 30) -> list[tuple[int, int]]:
    """(start, end) character spans of chunks of at most ~``chunk_size`` tokens with ``chunk_overlap`` overlap."""
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValueError("chunk_overlap must be at least 0 and smaller than chunk_size")
    pieces: list[tuple[int, int, int]] = []
    for start, end in _segments(text):
        tokens = count_tokens(text[start:end])
        if tokens == 0:
            continue
        if tokens > chunk_size:
            pieces.extend(_split_long(text, start, end, chunk_size))
        else:
            pieces.append((start, end, tokens))

    spans: list[tuple[int, int]] = []
    current: list[tuple[int, int, int]] = []
    total = 0
    for piece in pieces:
        if current and total + piece[2] > chunk_size:
            spans.append((current[0][0], current[-1][1]))
            # carry trailing pieces into the next chunk as overlap
            carried: list[tuple[int, int, int]] = []
            carried_tokens = 0
            for previous in reversed(current):
                if carried_tokens + previous[2] > chunk_overlap or carried_tokens + previous[2] + piece[2] > chunk_size:
                    break
                carried.insert(0, previous)
                carried_tokens += previous[2]
            current, total = carried, carried_tokens
        current.append(piece)
        total += piece[2]
    if current:
        spans.append((current[0][0], current[-1][1]))
    return [_strip(text, s, e) for s, e in spans]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
