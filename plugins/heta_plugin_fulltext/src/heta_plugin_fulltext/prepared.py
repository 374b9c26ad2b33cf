"""Analyzers that run in Python before the backend sees the text: the languages beyond English, and ``auto``.

They use core's analysis (``heta_framework.text``), the same as ``sql_text_search``:
Snowball stop words and stems, CJK runs as overlapping character pairs. The
backend only splits the prepared text on spaces, so Whoosh and tantivy index
exactly the same terms.

``auto`` detects each chunk's language (py3langid) and analyses it in that
language; the languages seen are kept in the index manifest. A query is
analysed in each of them and the terms ORed, because a query is too short to
detect its language reliably, while a term of the wrong language simply matches
nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from heta_framework.text.analysis import analyze
from heta_framework.text.languages import STEMMED_LANGUAGES, detect_language

from heta_plugin_fulltext.manifest import read_manifest, record_languages

AUTO = "auto"
#: the language (if any) of text that was not analysed as one: CJK, or a script Heta has no stemmer for
NO_LANGUAGE = "standard"
#: analyzer names handled here; "english" keeps each backend's own English analyzer (indexes built before stay valid)
PREPARED_ANALYZERS = tuple(name for name in STEMMED_LANGUAGES if name != "english") + (AUTO,)


def is_prepared(analyzer: str) -> bool:
    return analyzer in PREPARED_ANALYZERS


class PreparedText:
    """Chunk text and queries to space-separated terms for one index (its folder keeps ``auto``'s languages)."""

    def __init__(self, analyzer: str, folder: Path):
        self.analyzer = analyzer
        self._folder = folder
        self._lock = threading.Lock()
        self._languages: set[str] = set(read_manifest(folder).languages) if analyzer == AUTO else set()

    def _language_of(self, text: str) -> str:
        if self.analyzer != AUTO:
            return self.analyzer
        detected = detect_language(text)
        return detected if detected in STEMMED_LANGUAGES else NO_LANGUAGE

    def bodies(self, texts: Sequence[str]) -> list[str]:
        """Each text as the terms to index; ``auto`` also remembers (and records) the languages met."""
        bodies = []
        seen = set()
        for text in texts:
            language = self._language_of(text)
            seen.add(language)
            bodies.append(" ".join(analyze(text, None if language == NO_LANGUAGE else language)))
        if self.analyzer == AUTO:
            with self._lock:
                if not seen <= self._languages:
                    self._languages |= seen
                    record_languages(self._folder, sorted(self._languages))
        return bodies

    def query_terms(self, text: str) -> list[str]:
        if self.analyzer != AUTO:
            return list(dict.fromkeys(analyze(text, self.analyzer)))
        # the manifest again: another process may have indexed a new language since this one opened
        languages = read_manifest(self._folder).languages or (NO_LANGUAGE,)
        terms: list[str] = []
        for language in languages:
            terms.extend(analyze(text, None if language == NO_LANGUAGE else language))
        return list(dict.fromkeys(terms))
