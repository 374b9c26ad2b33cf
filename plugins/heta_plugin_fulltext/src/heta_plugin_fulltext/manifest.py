"""The manifest beside every text index: which backend and analyzer built it.

The analyzer decides the index terms, so an existing index is always opened
with the analyzer recorded here, whatever the store config says now.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

import attrs
from heta_framework.errors import KnowledgeBaseError

from heta_plugin_fulltext.analyzers import DEFAULT_ANALYZER, check_analyzer

log = logging.getLogger(__name__)

MANIFEST_FILE = "heta_text_index.json"
FORMAT_VERSION = 1


@attrs.frozen
class IndexManifest:
    backend: str
    analyzer: str
    format: int = FORMAT_VERSION
    #: for analyzer "auto": the languages the indexed chunks were analysed in
    languages: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    #: for analyzer "auto": how many chunks were analysed in each language (since the index was made:
    #: a replaced or removed chunk is not taken off). Queries are analysed in the main ones
    language_counts: dict[str, int] = attrs.field(factory=dict, converter=dict)

    def counts(self) -> dict[str, int]:
        """Chunks per language; an index written before counts has each recorded language once."""
        return dict(self.language_counts) or dict.fromkeys(self.languages, 1)


def read_manifest(folder: Path) -> IndexManifest:
    return IndexManifest(**json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8")))


def _write_manifest(folder: Path, manifest: IndexManifest) -> None:
    path = folder / MANIFEST_FILE
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(attrs.asdict(manifest)), encoding="utf-8")
    os.replace(temporary, path)


def count_languages(folder: Path, counts: Mapping[str, int]) -> IndexManifest:
    """Add ``counts`` (chunks per language) to the manifest (write then rename: a reader sees the old or the new file)."""
    manifest = read_manifest(folder)
    merged = manifest.counts()
    for language, count in counts.items():
        merged[language] = merged.get(language, 0) + count
    manifest = attrs.evolve(manifest, languages=tuple(sorted(merged)), language_counts=dict(sorted(merged.items())))
    _write_manifest(folder, manifest)
    return manifest


def settle_manifest(folder: Path, backend: str, configured_analyzer: str | None) -> IndexManifest:
    """The manifest of the index in ``folder``; written (with the configured analyzer, ``auto`` when the
    config names none) if the index is new. An existing index keeps the analyzer it was built with.

    Raises if the folder holds an index of another backend.
    """
    path = folder / MANIFEST_FILE
    if path.exists():
        manifest = read_manifest(folder)
        if manifest.backend != backend:
            raise KnowledgeBaseError(
                f"The text index in {folder} was built by the {manifest.backend!r} backend, but [stores.text] now "
                f"asks for {backend!r}. Set [stores.text] type = {manifest.backend!r} again, or delete the "
                "knowledge base's derived data (`heta delete`) and build it again."
            )
        if configured_analyzer is not None and manifest.analyzer != configured_analyzer:
            log.warning(
                "text index %s was built with analyzer %r; the store config now says %r. "
                "Using %r, the analyzer the index was built with; rebuild to change it.",
                folder, manifest.analyzer, configured_analyzer, manifest.analyzer,
            )
        return manifest
    manifest = IndexManifest(backend=backend, analyzer=check_analyzer(configured_analyzer or DEFAULT_ANALYZER))
    folder.mkdir(parents=True, exist_ok=True)
    _write_manifest(folder, manifest)
    return manifest
