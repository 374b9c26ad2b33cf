"""The manifest beside every text index: which backend and analyzer built it.

The analyzer decides the index terms, so an existing index is always opened
with the analyzer recorded here, whatever the store config says now.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import attrs
from heta_framework.errors import KnowledgeBaseError

from heta_plugin_fulltext.analyzers import check_analyzer

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


def read_manifest(folder: Path) -> IndexManifest:
    return IndexManifest(**json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8")))


def _write_manifest(folder: Path, manifest: IndexManifest) -> None:
    path = folder / MANIFEST_FILE
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(attrs.asdict(manifest)), encoding="utf-8")
    os.replace(temporary, path)


def record_languages(folder: Path, languages: list[str]) -> None:
    """Add ``languages`` to the manifest (write then rename: a reader sees the old or the new file)."""
    manifest = read_manifest(folder)
    merged = tuple(sorted(set(manifest.languages) | set(languages)))
    if merged != manifest.languages:
        _write_manifest(folder, attrs.evolve(manifest, languages=merged))


def settle_manifest(folder: Path, backend: str, configured_analyzer: str) -> IndexManifest:
    """The manifest of the index in ``folder``; written (with the configured analyzer) if the index is new.

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
        if manifest.analyzer != configured_analyzer:
            log.warning(
                "text index %s was built with analyzer %r; the store config now says %r. "
                "Using %r, the analyzer the index was built with; rebuild to change it.",
                folder, manifest.analyzer, configured_analyzer, manifest.analyzer,
            )
        return manifest
    manifest = IndexManifest(backend=backend, analyzer=check_analyzer(configured_analyzer))
    folder.mkdir(parents=True, exist_ok=True)
    _write_manifest(folder, manifest)
    return manifest
