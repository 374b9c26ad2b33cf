"""``[stores.text] type = "tantivy"`` options, importable without tantivy (it is the ``[tantivy]`` extra)."""

from __future__ import annotations

import attrs

from heta_plugin_fulltext.analyzers import analyzer_field
from heta_plugin_fulltext.extras import check_available


@attrs.frozen
class TantivyStoreConfig:
    """``[stores.text] type = "tantivy"`` options. ``threads = 0`` lets tantivy pick (one per core)."""

    path: str = "text_index"
    analyzer: str = analyzer_field()
    memory_mb: int = 128
    threads: int = 0

    def __attrs_post_init__(self) -> None:
        check_available("tantivy", "tantivy", 'The text store type "tantivy"')
