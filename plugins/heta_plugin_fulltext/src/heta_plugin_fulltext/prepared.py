"""Analyzers that run in Python before the backend sees the text: the languages beyond English, and ``auto``.

They use core's analysis (``heta_framework.text``), the same as ``sql_text_search``:
Snowball stop words and stems, CJK runs as overlapping character pairs. The
backend only splits the prepared text on spaces, so Whoosh and tantivy index
exactly the same terms.

``auto`` detects each chunk's language (py3langid) and analyses it in that
language; how many chunks each language holds is kept in the index manifest.
A query is analysed in the index's main languages (``query_languages``: each
with a tenth of the chunks, the most common always) and in its own language
when py3langid is sure of it, and the terms ORed: a query is often too short to
detect, while a term of the wrong language simply matches nothing.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from heta_framework.text.analysis import analyze
from heta_framework.text.languages import NO_LANGUAGE, STEMMED_LANGUAGES, chunk_languages, query_languages

from heta_plugin_fulltext.manifest import count_languages, read_manifest

AUTO = "auto"
#: analyzer names handled here; "english" keeps each backend's own English analyzer (indexes built before stay valid)
PREPARED_ANALYZERS = tuple(name for name in STEMMED_LANGUAGES if name != "english") + (AUTO,)


def is_prepared(analyzer: str) -> bool:
    return analyzer in PREPARED_ANALYZERS


def _analysed(text: str, language: str) -> list[str]:
    return analyze(text, None if language == NO_LANGUAGE else language)


class PreparedText:
    """Chunk text and queries to space-separated terms for one index (its folder keeps ``auto``'s languages)."""

    def __init__(self, analyzer: str, folder: Path):
        self.analyzer = analyzer
        self._folder = folder
        self._lock = threading.Lock()

    def bodies(self, texts: Sequence[str]) -> list[str]:
        """Each text as the terms to index; ``auto`` also counts (and records) the languages met."""
        if self.analyzer != AUTO:
            return [" ".join(analyze(text, self.analyzer)) for text in texts]
        with self._lock:
            languages = chunk_languages(texts, read_manifest(self._folder).counts())
            count_languages(self._folder, Counter(languages))
        return [" ".join(_analysed(text, language)) for text, language in zip(texts, languages)]

    def query_terms(self, text: str) -> list[str]:
        if self.analyzer != AUTO:
            return list(dict.fromkeys(analyze(text, self.analyzer)))
        # the manifest again: another process may have indexed more since this one opened
        terms: list[str] = []
        for language in query_languages(read_manifest(self._folder).counts(), text):
            terms.extend(_analysed(text, language))
        return list(dict.fromkeys(terms))
