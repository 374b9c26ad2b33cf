"""How chunk text becomes FTS5 rows and a query becomes an FTS5 expression, per analyzer.

FTS5 has no stemmer, so analysis happens here, in Python, and FTS5's
``unicode61`` tokenizer only splits the prepared text on spaces:

- ``standard`` (the default, and what every index built before analyzers had):
  words as written; each Chinese/Japanese/Korean character is one token.
- a language (``french``, ``spanish``, ...): its Snowball stop words dropped and
  the rest stemmed; CJK characters as in ``standard``.
- ``auto``: each chunk analysed in the language detected for it; a query is
  analysed in the index's main languages and its own (``heta_framework.text.languages``),
  and the terms ORed.

A CJK run in a query becomes an OR of its overlapping character pairs, each a
two-token phrase (``"上 海" OR "海 市"``): a whole-run phrase almost never
occurs in the text, while pairs find the words however the question is worded.
"""

from __future__ import annotations

import re

from heta_framework.text.analysis import analyze, cjk_characters
from heta_framework.text.languages import CJK_RANGES, STEMMED_LANGUAGES

STANDARD = "standard"
AUTO = "auto"
SQL_ANALYZERS = (STANDARD, *STEMMED_LANGUAGES, AUTO)

_CJK_RUN = re.compile(f"^[{CJK_RANGES}]+$")
_CJK_CHAR = re.compile(f"([{CJK_RANGES}])")


def check_sql_analyzer(name: str) -> str:
    if name not in SQL_ANALYZERS:
        raise ValueError(f"analyzer must be one of {', '.join(repr(a) for a in SQL_ANALYZERS)}, got {name!r}")
    return name


def fts_body(text: str, language: str | None = None) -> str:
    """Text as written into FTS5: analysed words and single CJK characters, separated by spaces."""
    if language is None:
        return _CJK_CHAR.sub(r" \1 ", text)  # exactly what indexes built before analyzers hold
    return " ".join(analyze(text, language, cjk=cjk_characters))


def query_terms(query: str, languages: list[str | None]) -> list[str]:
    """The distinct FTS5 terms of ``query``: quoted words and quoted CJK character pairs."""
    terms: list[str] = []
    for language in languages:
        for term in analyze(query, language):
            if _CJK_RUN.match(term):
                terms.append('"' + " ".join(term) + '"')
            else:
                terms.append('"' + term.replace('"', '""') + '"')
    return list(dict.fromkeys(terms))


def fts_match_expression(query: str, languages: list[str | None] | None = None) -> str | None:
    """An FTS5 expression ORing the query's terms; None if the query has none."""
    terms = query_terms(query, languages or [None])
    return " OR ".join(terms) if terms else None


__all__ = ["AUTO", "SQL_ANALYZERS", "STANDARD", "check_sql_analyzer", "fts_body", "fts_match_expression", "query_terms"]
