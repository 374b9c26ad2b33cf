"""``[stores.text] type = "tantivy"`` options, importable without tantivy (it is the ``[tantivy]`` extra)."""

from __future__ import annotations

from typing import Any

import attrs

from heta_plugin_fulltext.analyzers import check_analyzer
from heta_plugin_fulltext.extras import check_available


def _analyzer_name(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    check_analyzer(value)


@attrs.frozen
class TantivyStoreConfig:
    """``[stores.text] type = "tantivy"`` options. ``threads = 0`` lets tantivy pick (one per core)."""

    path: str = "text_index"
    analyzer: str = attrs.field(default="english", validator=_analyzer_name)
    memory_mb: int = 128
    threads: int = 0

    def __attrs_post_init__(self) -> None:
        check_available("tantivy", "tantivy", 'The text store type "tantivy"')
