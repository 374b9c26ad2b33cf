"""Heta full-text search plugin: Whoosh (default) or tantivy text index, ``IndexFullText``, ``full_text_search``.

Installed, it registers through the ``heta`` entry point; in tests,
``make_registry(heta_plugin_fulltext)``.
"""

from __future__ import annotations

from heta_framework.kb.stores import StoreType
from heta_framework.plugins.hookspecs import hookimpl

from heta_plugin_fulltext.analyzers import ANALYZERS
from heta_plugin_fulltext.engine import FullTextSearchEngine
from heta_plugin_fulltext.protocol import TextIndexStore
from heta_plugin_fulltext.step import IndexFullText
from heta_plugin_fulltext.tantivy_config import TantivyStoreConfig
from heta_plugin_fulltext.whoosh_store import WhooshStoreConfig, WhooshTextIndex

__all__ = [
    "ANALYZERS",
    "FullTextSearchEngine",
    "IndexFullText",
    "TantivyStoreConfig",
    "TantivyTextIndex",
    "TextIndexStore",
    "WhooshStoreConfig",
    "WhooshTextIndex",
]


def __getattr__(name: str):
    # import tantivy only when its store is asked for (Whoosh KBs never load it)
    if name == "TantivyTextIndex":
        from heta_plugin_fulltext.tantivy_store import TantivyTextIndex

        return TantivyTextIndex
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _open_tantivy(config, kb_root):
    from heta_plugin_fulltext.tantivy_store import TantivyTextIndex

    return TantivyTextIndex.open(config, kb_root)


@hookimpl
def register_steps(register):
    register(IndexFullText)


@hookimpl
def register_query_engines(register):
    register(FullTextSearchEngine())


@hookimpl
def register_stores(register):
    register(
        StoreType("whoosh", "text", WhooshTextIndex.open, WhooshStoreConfig, default=True,
                  description="Whoosh index folder, BM25F (pure Python)")
    )
    register(
        StoreType("tantivy", "text", _open_tantivy, TantivyStoreConfig,
                  description="tantivy index folder, BM25 (Rust; much faster to build and query)")
    )
