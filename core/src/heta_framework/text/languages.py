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
_identifier = None
_any_language = None


def _langid():
    global _identifier
    if _identifier is None:
        with _lock:
            if _identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                identifier = LanguageIdentifier.from_model_file(MODEL_FILE)
                identifier.set_languages(sorted(_BY_CODE))
                _identifier = identifier
    return _identifier


def detect_language(text: str, default: str = "english") -> str:
    """The analyzer name of the language ``text`` is written in; ``default`` when it has no letters."""
    if not any(ch.isalpha() for ch in text):
        return default
    code, _ = _langid().classify(text)
    return _BY_CODE.get(code, default)


def language_code(text: str) -> str | None:
    """The ISO 639-1 code of ``text``'s language among every language py3langid knows (97, not only those Heta
    analyses): for choices that depend on the language beyond analysis, such as a legacy file's encoding."""
    global _any_language
    if not any(ch.isalpha() for ch in text):
        return None
    if _any_language is None:
        with _lock:
            if _any_language is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                _any_language = LanguageIdentifier.from_model_file(MODEL_FILE)
    code, _ = _any_language.classify(text)
    return str(code)


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None
