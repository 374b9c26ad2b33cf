"""The tantivy analyzers behind the analyzer names in ``analyzers.py``.

tantivy tokenizes English itself (fast, in Rust). Chinese is segmented by jieba
in Python first and handed over as space-separated words, so tantivy's
whitespace tokenizer sees exactly jieba's words.
"""

from __future__ import annotations

from collections.abc import Callable

import tantivy

from heta_plugin_fulltext.analyzers import CHINESE_STOP_WORDS, check_analyzer, segment_chinese
from heta_plugin_fulltext.prepared import is_prepared

#: tantivy drops longer tokens anyway; 40 bytes is its own default for en_stem
MAX_TOKEN_BYTES = 40


def tantivy_tokenizer_name(analyzer: str) -> str:
    return f"heta_{check_analyzer(analyzer)}"


def tantivy_analyzer(name: str) -> tantivy.TextAnalyzer:
    check_analyzer(name)
    if is_prepared(name):
        # the text arrives analysed already (prepared.py): terms separated by spaces
        return tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES)).build()
    if name == "chinese":
        builder = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
            .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stopword("english"))
            .filter(tantivy.Filter.custom_stopword(sorted(CHINESE_STOP_WORDS)))
            .filter(tantivy.Filter.stemmer("english"))
        )
    else:
        builder = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
            .filter(tantivy.Filter.lowercase())
        )
        if name == "english":
            builder = builder.filter(tantivy.Filter.stopword("english")).filter(tantivy.Filter.stemmer("english"))
    return builder.build()


def text_preparer(name: str) -> Callable[[str], str]:
    """What happens to text in Python before tantivy's analyzer sees it (chunks and queries alike)."""
    return segment_chinese if check_analyzer(name) == "chinese" else _unchanged


def _unchanged(text: str) -> str:
    return text
