"""The Whoosh analyzers behind the analyzer names in ``analyzers.py``."""

from __future__ import annotations

from whoosh.analysis import LowercaseFilter, RegexTokenizer, StemFilter, StopFilter, Token, Tokenizer
from whoosh.analysis.filters import STOP_WORDS

from heta_plugin_fulltext.analyzers import CHINESE_STOP_WORDS, check_analyzer, jieba_tokens
from heta_plugin_fulltext.prepared import is_prepared


class JiebaTokenizer(Tokenizer):
    """Whoosh tokens from jieba's search-mode segmentation (module-level so Whoosh can save the schema)."""

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True,
                 start_pos=0, start_char=0, mode="", **kwargs):
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for position, (word, start, end) in enumerate(jieba_tokens(value)):
            token.original = token.text = word
            token.boost = 1.0
            token.stopped = False
            if positions:
                token.pos = start_pos + position
            if chars:
                token.startchar = start_char + start
                token.endchar = start_char + end
            yield token


def whoosh_analyzer(name: str):
    check_analyzer(name)
    if name == "english":
        # Whoosh's StemmingAnalyzer, spelled out: words, lower case, stop words, Porter stems
        return RegexTokenizer(r"\w+(\.?\w+)*") | LowercaseFilter() | StopFilter(STOP_WORDS, minsize=2) | StemFilter(cachesize=-1)
    if name == "chinese":
        # minsize=1: a single Chinese character is often a whole word
        return JiebaTokenizer() | LowercaseFilter() | StopFilter(STOP_WORDS | CHINESE_STOP_WORDS, minsize=1) | StemFilter(cachesize=-1)
    if is_prepared(name):
        # the text arrives analysed already (prepared.py): terms separated by spaces
        return RegexTokenizer(r"\S+")
    return RegexTokenizer(r"\w+") | LowercaseFilter()
