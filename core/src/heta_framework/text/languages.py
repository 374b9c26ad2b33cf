"""The languages Heta analyses, and which one a text is written in.

Detection uses py3langid (langid.py's model, loaded once from its package, a
NumPy archive, never a pickle), restricted to the languages Heta can analyse,
so every answer is one we have stop words and a stemmer for. On a chunk of a
few hundred characters it takes well under a millisecond.
"""

from __future__ import annotations

import re
import threading

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
#: loaded identifiers: "analysed" (restricted to the languages Heta analyses) and "any" (every language it knows)
_identifiers: dict[str, object] = {}


def _langid(which: str = "analysed"):
    """py3langid's identifier, loaded once per kind: ``analysed`` answers only languages Heta analyses."""
    if which not in _identifiers:
        with _lock:
            if which not in _identifiers:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                identifier = LanguageIdentifier.from_model_file(MODEL_FILE)
                if which == "analysed":
                    identifier.set_languages(sorted(_BY_CODE))
                _identifiers[which] = identifier
    return _identifiers[which]


def detect_language(text: str, default: str = "english") -> str:
    """The analyzer name of the language ``text`` is written in; ``default`` when it has no letters."""
    if not any(ch.isalpha() for ch in text):
        return default
    code, _ = _langid().classify(text)
    return _BY_CODE.get(code, default)


def language_code(text: str) -> str | None:
    """The ISO 639-1 code of ``text``'s language among every language py3langid knows (97, not only those Heta
    analyses): for choices that depend on the language beyond analysis, such as a legacy file's encoding."""
    if not any(ch.isalpha() for ch in text):
        return None
    code, _ = _langid("any").classify(text)
    return str(code)


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None
