"""Text to index terms for one language: words in lower case, stop words dropped, Snowball stems.

The same function must turn chunks and queries into terms, so an index records
the analyzer it was built with and is always queried with it. Runs of Chinese,
Japanese or Korean characters carry no spaces between words; they become
overlapping character pairs (``上海市`` -> ``上海``, ``海市``), which needs no
dictionary and matches a query however it is segmented. A lone CJK character
stays one term.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable, Iterable
from importlib import resources

from heta_framework.text.languages import CJK_RANGES, STEMMED_LANGUAGES

_TOKEN = re.compile(f"[{CJK_RANGES}]+|[^\\W_{CJK_RANGES}]+", re.UNICODE)
_CJK_RUN = re.compile(f"[{CJK_RANGES}]+")


@functools.cache
def stop_words(language: str) -> frozenset[str]:
    """The Snowball stop word list of ``language`` (an analyzer name such as ``"french"``)."""
    text = resources.files("heta_framework.text").joinpath("stop_words", f"{language}.txt").read_text(encoding="utf-8")
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


_stemmers = threading.local()


def stemmer(language: str) -> Callable[[list[str]], list[str]]:
    """This thread's Snowball stemmer for ``language`` (snowballstemmer uses PyStemmer's C code when installed).

    One per thread: a stemmer keeps the word it is working on in itself, so one shared by threads gave a
    concurrent query another query's stems ("running foxes" analysed as ``run swim``) or an IndexError.
    """
    made: dict[str, Callable[[list[str]], list[str]]] = _stemmers.__dict__
    found = made.get(language)
    if found is None:
        import snowballstemmer

        found = made[language] = snowballstemmer.stemmer(language).stemWords
    return found


def cjk_pairs(run: str) -> list[str]:
    """Overlapping character pairs of a CJK run; a single character is its own term."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_characters(run: str) -> list[str]:
    return list(run)


def words(text: str) -> Iterable[str]:
    """Raw words and CJK runs of ``text``, lower case."""
    return (token.lower() for token in _TOKEN.findall(text))


def analyze(text: str, language: str | None, cjk: Callable[[str], list[str]] = cjk_pairs) -> list[str]:
    """Index terms of ``text`` in ``language`` (an analyzer name), in order; ``None`` means no stop words or stems.

    ``cjk`` turns each CJK run into terms (character pairs unless told otherwise).
    """
    plain: list[str] = []
    terms: list[str] = []
    dropped = stop_words(language) if language in STEMMED_LANGUAGES else frozenset()

    def flush() -> None:
        if plain:
            if language in STEMMED_LANGUAGES:
                # a stem can land on a stop word (French "les" -> "le"): such a stem is dropped too
                terms.extend(stem for stem in stemmer(language)(plain) if stem not in dropped)
            else:
                terms.extend(plain)
            plain.clear()

    for token in words(text):
        if _CJK_RUN.fullmatch(token):
            flush()
            terms.extend(cjk(token))
        elif token not in dropped:
            plain.append(token)
    flush()
    return terms
