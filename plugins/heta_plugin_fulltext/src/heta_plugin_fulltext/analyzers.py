"""Analyzer names shared by every backend, and Chinese word segmentation with jieba.

An analyzer turns text into index terms. The same analyzer must tokenize the
chunks and the queries, so its name is recorded in the index manifest and in
the search asset, and a reopened index is always queried with the analyzer it
was built with.

- ``english``: words, lower case, English stop words removed, stemmed.
- ``chinese``: jieba word segmentation (search mode, so ``上海市`` also yields
  ``上海``); English words inside Chinese text are treated like ``english``.
- ``standard``: language-neutral words in lower case; no stop words, no stemming.
- ``french``, ``spanish``, ``german``, ``italian``, ``portuguese``, ``dutch``,
  ``russian``: that language's Snowball stop words and stems (see ``prepared.py``).
- ``auto``: each chunk in the language detected for it (see ``prepared.py``). What a new index
  uses when the store config names no analyzer.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from typing import Any

import attrs

from heta_plugin_fulltext.extras import check_available, require

ANALYZERS = ("english", "chinese", "standard", "french", "spanish", "german", "italian", "portuguese", "dutch", "russian", "auto")

#: words that carry no meaning in a Chinese query ("的", "是", ...); jieba ships no such list
CHINESE_STOP_WORDS = frozenset(
    "的 了 是 在 和 与 或 及 也 就 都 而 之 其 这 那 有 个 为 对 以 于 被 把 从 到 将 等 吗 呢 吧 啊 着 过 我 你 他 她 它 们".split()
)

_WORD_CHAR = re.compile(r"\w")


def check_analyzer(name: str) -> str:
    if name not in ANALYZERS:
        raise ValueError(f"analyzer must be one of {', '.join(repr(a) for a in ANALYZERS)}, got {name!r}")
    if name == "chinese":
        check_available("jieba", "chinese", 'The analyzer "chinese"')
    return name


#: what a new index is analysed with when the store config names no analyzer: each chunk in its own language
DEFAULT_ANALYZER = "auto"


def analyzer_field() -> Any:
    """The ``analyzer`` option of every text store config, checked when the recipe is read.

    Unset (``None``): a new index follows its documents (``auto``), and an existing one keeps the analyzer
    it was built with, silently; a named analyzer that differs from an existing index's is warned about.
    """
    return attrs.field(default=None, validator=lambda _instance, _attribute, value: value is None or check_analyzer(value))


_jieba_lock = threading.Lock()
_jieba_tokenizer = None


def _jieba():
    """jieba's tokenizer, initialised once, quietly and offline (its dictionary ships in the package)."""
    global _jieba_tokenizer
    if _jieba_tokenizer is None:
        with _jieba_lock:
            if _jieba_tokenizer is None:
                jieba = require("jieba", "chinese", 'The analyzer "chinese"')
                # jieba announces every dictionary load on stderr at DEBUG level; libraries log, never print
                logging.getLogger("jieba").setLevel(logging.WARNING)
                tokenizer = jieba.Tokenizer()
                tokenizer.initialize()
                _jieba_tokenizer = tokenizer
    return _jieba_tokenizer


def jieba_tokens(text: str) -> Iterator[tuple[str, int, int]]:
    """``(word, start, end)`` for every word jieba finds in search mode; punctuation and spaces dropped."""
    for word, start, end in _jieba().tokenize(text, mode="search"):
        if _WORD_CHAR.search(word):
            yield word, start, end


def segment_chinese(text: str) -> str:
    """Text as space-separated jieba words, for backends that split on whitespace."""
    return " ".join(word for word, _, _ in jieba_tokens(text))
