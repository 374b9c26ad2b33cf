"""``[stores.text] type = "tantivy"`` options, importable without tantivy (an environment can lack it: extras.py)."""

from __future__ import annotations

import attrs
from heta_framework.common.validators import whole_number

from heta_plugin_fulltext.analyzers import analyzer_field
from heta_plugin_fulltext.extras import check_available


@attrs.frozen
class TantivyStoreConfig:
    """``[stores.text] type = "tantivy"`` options. ``threads = 0`` lets tantivy pick (one per core)."""

    path: str = "text_index"
    analyzer: str | None = analyzer_field()
    memory_mb: int = attrs.field(default=128, validator=whole_number(1))
    threads: int = attrs.field(default=0, validator=whole_number(0))

    def __attrs_post_init__(self) -> None:
        check_available("tantivy", "", 'The text store type "tantivy"')
