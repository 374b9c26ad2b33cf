"""Core's built-in plugin, registered through the same hooks as every other plugin."""

from __future__ import annotations

from heta_framework.builtin.delimited import DELIMITED_PARSER
from heta_framework.builtin.engines.fusion_search import FusionSearchEngine
from heta_framework.builtin.engines.hybrid import HybridSearchEngine
from heta_framework.builtin.engines.multihop import MultihopSearchEngine
from heta_framework.builtin.engines.rerank import RerankSearchEngine
from heta_framework.builtin.engines.rewrite import RewriteSearchEngine
from heta_framework.builtin.engines.sql_text import SqlTextSearchEngine
from heta_framework.builtin.epub import EPUB_PARSER
from heta_framework.builtin.image_files import IMAGE_PARSER
from heta_framework.builtin.local_executor import LOCAL_EXECUTOR
from heta_framework.builtin.parsers import BUILTIN_PARSERS
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.builtin.stores.folder import FolderObjectStore, FolderStoreConfig
from heta_framework.builtin.stores.folder_state import FolderState
from heta_framework.builtin.stores.sqlite_chunks import SQLiteChunkStore, SQLiteChunkStoreConfig
from heta_framework.contracts.stores import StoreType
from heta_framework.plugins.hookspecs import hookimpl


@hookimpl
def register_steps(register):
    register(ParseDocuments)
    register(SplitDocuments)
    register(PersistChunks)


@hookimpl
def register_query_engines(register):
    register(SqlTextSearchEngine())
    # composed modes: they reach their base modes (from any plugin) only through QueryContext.query
    register(HybridSearchEngine())
    register(FusionSearchEngine())
    register(RerankSearchEngine())
    register(RewriteSearchEngine(base_mode="heta_rerank_search"))
    register(MultihopSearchEngine(base_mode="heta_rerank_search"))


@hookimpl
def register_stores(register):
    register(StoreType("folder", "objects", FolderObjectStore.open, FolderStoreConfig, default=True, description="a plain folder"))
    register(StoreType("sqlite", "sql", SQLiteChunkStore.open, SQLiteChunkStoreConfig, default=True, description="SQLite + FTS5"))
    register(StoreType("folder", "state", FolderState.open, default=True,
                       description="catalog, run record and caches as files in the knowledge-base folder; flock writer lock"))


@hookimpl
def register_parsers(register):
    for parser in BUILTIN_PARSERS:
        register(parser)
    register(DELIMITED_PARSER)
    register(IMAGE_PARSER)
    register(EPUB_PARSER)


@hookimpl
def register_executors(register):
    register(LOCAL_EXECUTOR)
