"""``heta build --meta KEY=VALUE``: document metadata (``importance``, ``tags``, anything) for the files given.

Files given with ``--meta`` are taken in as documents with that metadata, under the same
ids and sources a plain build gives them. Values are JSON when they parse (``importance=8``
is the number 8), else text; ``tags=a,b`` is the list ``["a", "b"]``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click


def parse_meta(items: tuple[str, ...]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--meta")
        key = key.strip()
        if key == "tags":
            meta[key] = [tag.strip() for tag in text.split(",") if tag.strip()]
            continue
        try:
            meta[key] = json.loads(text)
        except json.JSONDecodeError:
            meta[key] = text
    importance = meta.get("importance")
    if "importance" in meta and (isinstance(importance, bool) or not isinstance(importance, (int, float)) or not 0 <= importance <= 10):
        raise click.BadParameter(f"importance must be a number from 0 to 10, got {importance!r}", param_hint="--meta")
    return meta


def documents_with_metadata(paths: list[Path], meta: dict[str, Any]) -> list[Any]:
    """Each file under ``paths`` (folders walked as a build walks them) as a ``SourceDocument`` carrying ``meta``."""
    from heta_framework.contracts.documents import SourceDocument
    from heta_framework.runtime.sources import SourceWalk

    return [
        SourceDocument(data=item.data, id=item.id, name=item.name, source=item.source, metadata={**item.metadata, **meta})
        for item in SourceWalk(paths)
    ]
