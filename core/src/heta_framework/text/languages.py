"""The languages Heta analyses, and which one a text is written in.

Detection uses py3langid (langid.py's model, loaded once from its package, a
NumPy archive, never a pickle), restricted to the languages Heta can analyse,
so every answer is one we have stop words and a stemmer for. On a chunk of a
few hundred characters it takes well under a millisecond.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence

#: analyzer name -> ISO 639-1 code, for the languages with Snowball stop words and stems
STEMMED_LANGUAGES: dict[str, str] = {
    "english": "en",
    "french": "fr",
    "spanish": "es",
    "german": "de",
    "italian": "it",
    "portuguese": "pt",
    "dutch": "nl",
    "russian": "ru",
}
#: languages written without spaces: indexed as overlapping character pairs, not words
CJK_LANGUAGES: dict[str, str] = {"chinese": "zh", "japanese": "ja", "korean": "ko"}

_BY_CODE = {code: name for name, code in {**STEMMED_LANGUAGES, **CJK_LANGUAGES}.items()}

CJK_RANGES = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK_CHAR = re.compile(f"[{CJK_RANGES}]")

_lock = threading.Lock()
#: the name under which text analysed in no language is counted: CJK, or a script Heta has no stemmer for
NO_LANGUAGE = "standard"
#: ``auto`` analyses a query whose language is unclear in every language holding at least this share of the
#: indexed chunks (the most common one always): one French article quoting a Russian name must not make every
#: query Russian too
QUERY_LANGUAGE_SHARE = 0.1
#: ...and a query py3langid is this sure of (among the index's languages) in its own language alone; a chunk it
#: is less sure of is analysed in the index's main language
QUERY_LANGUAGE_CONFIDENCE = 0.9

#: loaded identifiers: "analysed" (restricted to the languages Heta analyses), "sure" (the same, with
#: probabilities that sum to 1, for a confidence) and "any" (every language it knows)
_identifiers: dict[str, object] = {}


def _langid(which: str = "analysed"):
    """py3langid's identifier, loaded once per kind: ``analysed`` answers only languages Heta analyses."""
    if which not in _identifiers:
        with _lock:
            if which not in _identifiers:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=which == "sure")
                if which in ("analysed", "sure"):
                    identifier.set_languages(sorted(_BY_CODE))
                _identifiers[which] = identifier
    return _identifiers[which]


#: identifiers restricted to a knowledge base's languages, by their ISO codes (a few per process)
_among: dict[frozenset[str], object] = {}
_AMONG_KEPT = 8


def _langid_among(codes: frozenset[str]):
    """An identifier answering only among ``codes``, with probabilities that sum to 1 (loaded once per set)."""
    identifier = _among.get(codes)
    if identifier is None:
        with _lock:
            identifier = _among.get(codes)
            if identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
                identifier.set_languages(sorted(codes))
                if len(_among) >= _AMONG_KEPT:
                    _among.pop(next(iter(_among)))
                _among[codes] = identifier
    return identifier


def detect_language(text: str, default: str = "english") -> str:
    """The analyzer name of the language ``text`` is written in; ``default`` when it has no letters."""
    if not any(ch.isalpha() for ch in text):
        return default
    code, _ = _langid().classify(text)
    return _BY_CODE.get(code, default)


def chunk_languages(texts: Sequence[str], counts: Mapping[str, int]) -> list[str]:
    """The language ``auto`` analyses each chunk in: a stemmed language, else ``NO_LANGUAGE``.

    A chunk is detected in its main script only (a French article quoting a Russian name in Cyrillic
    is French). When py3langid is not sure of a chunk (a heading, a list of names: "glacier glacier"
    could be four languages), it takes the main language of the index and this batch (``counts``:
    chunks per language indexed so far), so a query analysed in the main language still finds it.
    """
    detected = [_detect(main_script(text)) for text in texts]
    tally = Counter({language: count for language, count in counts.items() if count > 0})
    tally.update(language for language, sure in detected if sure)
    main = max(tally, key=lambda language: (tally[language], language)) if tally else None
    return [language if sure or main is None else main for language, sure in detected]


def _detect(text: str) -> tuple[str, bool]:
    """``(analysis language, sure)`` of ``text``: NO_LANGUAGE, and sure, when it has no letters."""
    if not any(ch.isalpha() for ch in text):
        return NO_LANGUAGE, True
    code, probability = _langid("sure").classify(text)
    name = _BY_CODE.get(code)
    return (name if name in STEMMED_LANGUAGES else NO_LANGUAGE), probability >= QUERY_LANGUAGE_CONFIDENCE


def main_script(text: str) -> str:
    """``text`` without the letters of scripts other than its most used one (spaces and digits kept)."""
    scripts = Counter(_script(ch) for ch in text if ch.isalpha())
    if len(scripts) < 2:
        return text
    main = scripts.most_common(1)[0][0]
    return "".join(ch for ch in text if not ch.isalpha() or _script(ch) == main)


@functools.lru_cache(maxsize=4096)
def _script(ch: str) -> str:
    """The script of a letter: the first word of its Unicode name (LATIN, CYRILLIC, CJK, HIRAGANA, ...)."""
    return unicodedata.name(ch, "UNKNOWN").split(" ", 1)[0]


def query_languages(counts: Mapping[str, int], query: str) -> list[str]:
    """The languages ``auto`` analyses ``query`` in, given how many indexed chunks each language holds.

    The query's own language alone when py3langid, choosing among the languages the index holds, gives it
    ``QUERY_LANGUAGE_CONFIDENCE`` or more: the other languages' analyses of its words only add noise (on an
    English, French and Chinese knowledge base, ORing them cost French questions 0.03 MRR@10). Otherwise (a
    query is often too short to tell) every language with ``QUERY_LANGUAGE_SHARE`` of the chunks, the most
    common always. A query with CJK characters is analysed as ``NO_LANGUAGE`` (character pairs) when the
    index holds such text. An index that counted nothing yet answers ``[NO_LANGUAGE]``.
    """
    held = {language: count for language, count in counts.items() if count > 0}
    if not held:
        return [NO_LANGUAGE]
    own = _sure_language_among(query, held)
    if own is not None:
        return [own]
    total = sum(held.values())
    top = max(held, key=lambda language: (held[language], language))
    return sorted({language for language, count in held.items() if count >= QUERY_LANGUAGE_SHARE * total} | {top})


def _sure_language_among(query: str, held: Mapping[str, int]) -> str | None:
    """The query's language among those the index holds, when py3langid is sure of it: choosing between the
    index's two or three languages, not a hundred, a short question is usually clear."""
    if not any(ch.isalpha() for ch in query):
        return None
    if has_cjk(query):
        return NO_LANGUAGE if NO_LANGUAGE in held else None  # CJK text is indexed as character pairs
    codes = frozenset(STEMMED_LANGUAGES[language] for language in held if language in STEMMED_LANGUAGES)
    if len(codes) < 2:
        return None  # one language (or none) to choose from: the main languages are the answer already
    code, probability = _langid_among(codes).classify(query)
    if probability < QUERY_LANGUAGE_CONFIDENCE or _langid().classify(query)[0] != code:
        return None  # unsure, or a language the index does not hold (French asked of English and Spanish text)
    return _BY_CODE[code]


def language_code(text: str) -> str | None:
    """The ISO 639-1 code of ``text``'s language among every language py3langid knows (97, not only those Heta
    analyses): for choices that depend on the language beyond analysis, such as a legacy file's encoding."""
    if not any(ch.isalpha() for ch in text):
        return None
    code, _ = _langid("any").classify(text)
    return str(code)


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None
