"""Document metadata from the API and the CLI: ``importance`` (0-10) and ``tags`` beside free keys."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from heta_server.errors import ApiError


def document_metadata(metadata: Mapping[str, Any], importance: Any = None, tags: Iterable[str] | None = None) -> dict[str, Any]:
    merged = dict(metadata)
    if importance is not None:
        merged["importance"] = importance
    if tags is not None:
        merged["tags"] = list(tags)
    if "importance" in merged:
        value = merged["importance"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 10:
            raise ApiError(422, "InvalidRequest", f"importance must be a number from 0 to 10, got {value!r}.")
    if "tags" in merged:
        value = merged["tags"]
        if not isinstance(value, list) or not all(isinstance(tag, str) and tag for tag in value):
            raise ApiError(422, "InvalidRequest", f"tags must be a list of non-empty text, got {value!r}.")
    return merged
