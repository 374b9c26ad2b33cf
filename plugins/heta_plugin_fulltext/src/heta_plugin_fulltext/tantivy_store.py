"""``stores.text`` type ``tantivy``: a tantivy (Rust) index folder; BM25, much faster than Whoosh.

One writer lives from the first write until ``flush()`` (the runner flushes
after every step); each ``upsert`` commits. Custom analyzers are not saved by
tantivy, so they are registered again on every open, from the manifest.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import tantivy
from heta_framework.kb.documents import Chunk

from heta_plugin_fulltext.manifest import settle_manifest
from heta_plugin_fulltext.prepared import PreparedText, is_prepared
from heta_plugin_fulltext.records import chunk_from_record, chunk_record, filter_groups, filter_terms
from heta_plugin_fulltext.tantivy_analysis import MAX_TOKEN_BYTES, tantivy_analyzer, tantivy_tokenizer_name, text_preparer
from heta_plugin_fulltext.tantivy_config import TantivyStoreConfig

BACKEND = "tantivy"


def tantivy_schema(analyzer: str) -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("chunk_id", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_text_field("document_id", tokenizer_name="raw", index_option="basic")
    builder.add_text_field("filters", tokenizer_name="raw", index_option="basic")
    # frequencies without positions: queries are ORs of terms, never phrases
    builder.add_text_field("body", tokenizer_name=tantivy_tokenizer_name(analyzer), index_option="freq")
    builder.add_bytes_field("text", stored=True)
    builder.add_bytes_field("record", stored=True)
    return builder.build()


class TantivyTextIndex:
    """A ``TextIndexStore`` on tantivy."""

    backend = BACKEND
    #: a search is a few hundred microseconds, most of it in Rust without the GIL (TextIndexStore)
    searches_in_place = True

    def __init__(self, folder: Path, config: TantivyStoreConfig, kb_root: Path | None = None):
        self.folder = folder
        self._kb_root = kb_root
        self._config = config
        self._manifest = settle_manifest(folder, BACKEND, config.analyzer)
        self._schema = tantivy_schema(self._manifest.analyzer)
        self._analyzer = tantivy_analyzer(self._manifest.analyzer)
        self._prepare = text_preparer(self._manifest.analyzer)
        self._prepared = PreparedText(self._manifest.analyzer, folder) if is_prepared(self._manifest.analyzer) else None
        self._index = tantivy.Index(self._schema, path=str(folder), reuse=True)
        self._index.register_tokenizer(tantivy_tokenizer_name(self._manifest.analyzer), self._analyzer)
        self._lock = threading.RLock()  # writers
        # searches run on the event loop (searches_in_place), so they never wait for a writer's lock, which is
        # held through a whole commit: only taking or dropping the current searcher is guarded, by this one
        self._searcher_lock = threading.Lock()
        self._writer: Any = None
        self._searcher: Any = None

    @classmethod
    def open(cls, config: TantivyStoreConfig | None, kb_root: Path) -> TantivyTextIndex:
        config = config or TantivyStoreConfig()
        return cls(kb_root / config.path, config, kb_root)

    @property
    def analyzer(self) -> str:
        return self._manifest.analyzer

    def relative_paths(self) -> list[str]:
        return [self.folder.relative_to(self._kb_root).as_posix() if self._kb_root else str(self.folder)]

    # --- writing ---------------------------------------------------------------------

    def upsert(self, chunks: Sequence[Chunk]) -> int:
        unique = {chunk.id: chunk for chunk in chunks}  # the last version of a repeated id wins
        if not unique:
            return 0
        with self._lock:
            replace = self._any_exist(list(unique))
            writer = self._current_writer()
            texts = [chunk.text for chunk in unique.values()]
            bodies = self._prepared.bodies(texts) if self._prepared else [self._prepare(text) for text in texts]
            try:
                for chunk, body in zip(unique.values(), bodies):
                    if replace:
                        # a delete applies to documents added before it, so delete-then-add replaces
                        writer.delete_documents_by_term("chunk_id", chunk.id)
                    writer.add_document(
                        tantivy.Document(
                            chunk_id=chunk.id,
                            document_id=chunk.document_id,
                            filters=list(filter_terms(chunk)),
                            body=body,
                            text=chunk.text.encode("utf-8"),
                            record=chunk_record(chunk).encode("utf-8"),
                        )
                    )
                writer.commit()
            except BaseException:
                writer.rollback()
                raise
            self._after_commit()
        return len(unique)

    def _any_exist(self, chunk_ids: list[str]) -> bool:
        """Whether any of these chunks is indexed; a fresh build then skips one delete per chunk."""
        searcher = self._current_searcher()
        if searcher.num_docs == 0:
            return False
        existing = tantivy.Query.term_set_query(self._schema, "chunk_id", chunk_ids)
        return searcher.search(existing, limit=1, count=True).count > 0

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        with self._lock:
            searcher = self._current_searcher()
            deleted = 0
            writer = self._current_writer()
            for document_id in document_ids:
                match = tantivy.Query.term_query(self._schema, "document_id", document_id, index_option="basic")
                deleted += searcher.search(match, limit=1, count=True).count
                writer.delete_documents_by_term("document_id", document_id)
            writer.commit()
            self._after_commit()
        return deleted

    def _current_writer(self) -> Any:
        if self._writer is None:
            self._writer = self._index.writer(heap_size=self._config.memory_mb * 1_000_000, num_threads=self._config.threads)
        return self._writer

    def _after_commit(self) -> None:
        self._index.reload()
        with self._searcher_lock:
            self._searcher = None

    # --- reading ---------------------------------------------------------------------

    def terms(self, text: str) -> list[str]:
        if self._prepared:
            # tantivy's whitespace tokenizer would give back exactly these terms (long ones aside)
            return [t for t in self._prepared.query_terms(text) if len(t.encode("utf-8")) < MAX_TOKEN_BYTES]
        return list(dict.fromkeys(self._analyzer.analyze(self._prepare(text))))

    def search(self, text: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]:
        terms = self.terms(text)
        if not terms:
            return []
        Query, Occur = tantivy.Query, tantivy.Occur
        query = Query.boolean_query([(Occur.Should, Query.term_query(self._schema, "body", t, index_option="freq")) for t in terms])
        groups = filter_groups(filters)
        if groups:
            # constant zero scores: filters decide what matches, never the order
            restrictions = [(Occur.Must, Query.const_score_query(Query.term_set_query(self._schema, "filters", list(g)), 0.0)) for g in groups]
            query = Query.boolean_query([(Occur.Must, query), *restrictions])
        # a searcher is a snapshot of the committed segments that threads may share: a commit meanwhile
        # cannot change it, so concurrent queries run in tantivy side by side
        searcher = self._current_searcher()
        hits = searcher.search(query, limit=top_k, count=False).hits
        found = []
        for score, address in hits:
            document = searcher.doc(address)
            chunk = chunk_from_record(
                document.get_first("chunk_id"),
                bytes(document.get_first("text")).decode("utf-8"),
                bytes(document.get_first("record")).decode("utf-8"),
            )
            found.append((chunk, float(score)))
        return found

    def count(self) -> int:
        return self._current_searcher().num_docs

    def _current_searcher(self) -> Any:
        searcher = self._searcher  # one attribute read: the last searcher taken, or None after a commit
        if searcher is None:
            with self._searcher_lock:
                if self._searcher is None:
                    self._searcher = self._index.searcher()
                searcher = self._searcher
        return searcher

    def flush(self) -> None:
        """Let go of the writer (and its folder lock); everything written is already committed."""
        with self._lock:
            if self._writer is not None:
                writer, self._writer = self._writer, None
                writer.wait_merging_threads()

    def close(self) -> None:
        self.flush()
        with self._searcher_lock:
            self._searcher = None
