"""``stores.text`` type ``whoosh`` (the default): a Whoosh index folder with BM25F scoring.

Pure Python, no server. Each ``upsert`` is one commit; chunks are replaced by
id. The schema is rebuilt from the manifest on every open instead of unpickled
from the index, so the analyzer always comes from ``heta_text_index.json``.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from heta_framework.common.validators import number, whole_number
from heta_framework.kb.documents import Chunk
from whoosh import index as whoosh_index
from whoosh.scoring import BM25F

from heta_plugin_fulltext.analyzers import analyzer_field
from heta_plugin_fulltext.manifest import settle_manifest
from heta_plugin_fulltext.prepared import PreparedText, is_prepared
from heta_plugin_fulltext.records import TERM_SEPARATOR, chunk_from_record, chunk_record, filter_groups, filter_terms
from heta_plugin_fulltext.search_processes import HelperSearches
from heta_plugin_fulltext.whoosh_analysis import whoosh_analyzer
from heta_plugin_fulltext.whoosh_search import HitRow, search_rows, whoosh_schema

BACKEND = "whoosh"


@attrs.frozen
class WhooshStoreConfig:
    """``[stores.text] type = "whoosh"`` options. ``k1``/``b`` are the BM25F parameters."""

    path: str = "text_index"
    analyzer: str | None = analyzer_field()
    k1: float = attrs.field(default=1.2, validator=number(minimum=0))
    b: float = attrs.field(default=0.75, validator=number(0, 1))
    #: the writer's pool of postings before it spills a sorted run to disk. Its postings are Python objects, and
    #: the heap they fragment stays with the process after the commit: indexing the 10k bench chunks left it
    #: 106 MB larger with 256 (no spill), 77 MB with 64 and 40 MB with 32, for 6.6 s -> 10.0 s of indexing
    memory_mb: int = attrs.field(default=32, validator=whole_number(1))
    #: helper processes that take the searches made while another is running (search_processes.py), so queries
    #: in flight together run side by side instead of taking turns on the GIL; 0: never start one. Two, because
    #: this process still spends the GIL on the rest of each query (10k bench, 2 cores, 8 queries in flight
    #: against one at a time: 1.31x with one helper, 1.58x with two, 1.60x with three; ~70 MB each)
    search_processes: int = attrs.field(default=2, validator=whole_number(0))


class WhooshTextIndex:
    """A ``TextIndexStore`` on Whoosh."""

    backend = BACKEND

    def __init__(self, folder: Path, config: WhooshStoreConfig, kb_root: Path | None = None):
        self.folder = folder
        self._kb_root = kb_root
        self._config = config
        self._manifest = settle_manifest(folder, BACKEND, config.analyzer)
        self._schema = whoosh_schema(self._manifest.analyzer)
        self._analyzer = whoosh_analyzer(self._manifest.analyzer)
        self._prepared = PreparedText(self._manifest.analyzer, folder) if is_prepared(self._manifest.analyzer) else None
        if whoosh_index.exists_in(folder):
            self._index = whoosh_index.open_dir(folder, schema=self._schema)
        else:
            self._index = whoosh_index.create_in(folder, self._schema)
        self._lock = threading.RLock()  # writers only: searching runs without it (see _current_searcher)
        self._generation = 0  # bumped by every commit, so each thread reopens its searcher on the new segments
        self._per_thread = threading.local()
        self._searchers: list[Any] = []  # every searcher opened, closed with the store
        # pure Python: searches side by side in this process only take turns on the GIL, and the turns cost
        # (TextIndexStore), so one runs here at a time and the others go to helper processes
        self.concurrent_searches = 1 + config.search_processes
        self._searching_here = threading.Lock()
        self._in_flight, self._in_flight_lock = 0, threading.Lock()
        self._helpers = (
            HelperSearches(config.search_processes, folder, {"analyzer": self._manifest.analyzer, "k1": config.k1, "b": config.b})
            if config.search_processes else None
        )

    @classmethod
    def open(cls, config: WhooshStoreConfig | None, kb_root: Path) -> WhooshTextIndex:
        config = config or WhooshStoreConfig()
        return cls(kb_root / config.path, config, kb_root)

    @property
    def analyzer(self) -> str:
        return self._manifest.analyzer

    @property
    def helpers(self) -> HelperSearches | None:
        """The helper processes (their ``served`` count, ``processes()``); None with ``search_processes = 0``."""
        return self._helpers

    def relative_paths(self) -> list[str]:
        return [self.folder.relative_to(self._kb_root).as_posix() if self._kb_root else str(self.folder)]

    # --- writing ---------------------------------------------------------------------

    def upsert(self, chunks: Sequence[Chunk]) -> int:
        unique = {chunk.id: chunk for chunk in chunks}  # the last version of a repeated id wins
        if not unique:
            return 0
        with self._lock:
            replace = self._index.doc_count_all() > 0
            writer = self._index.writer(limitmb=self._config.memory_mb)
            try:
                # update_document looks each id up first; a new index has nothing to replace
                add = writer.update_document if replace else writer.add_document
                texts = [chunk.text for chunk in unique.values()]
                bodies = self._prepared.bodies(texts) if self._prepared else texts
                for chunk, body in zip(unique.values(), bodies):
                    add(
                        chunk_id=chunk.id,
                        document_id=chunk.document_id,
                        filters=TERM_SEPARATOR.join(filter_terms(chunk)),
                        body=body,
                        text=chunk.text,
                        record=chunk_record(chunk),
                    )
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            self._refresh()
        return len(unique)

    def delete_documents(self, document_ids: Sequence[str]) -> int:
        with self._lock:
            writer = self._index.writer()
            try:
                deleted = sum(writer.delete_by_term("document_id", document_id) for document_id in document_ids)
            except BaseException:
                writer.cancel()
                raise
            writer.commit()
            self._refresh()
        return deleted

    # --- reading ---------------------------------------------------------------------

    def terms(self, text: str) -> list[str]:
        if self._prepared:
            return self._prepared.query_terms(text)
        return list(dict.fromkeys(token.text for token in self._analyzer(text, mode="query")))

    def search(self, text: str, top_k: int, filters: Mapping[str, Any] | None = None) -> list[tuple[Chunk, float]]:
        terms = self.terms(text)
        if not terms:
            return []
        rows = self._rows(terms, filter_groups(filters), top_k)
        return [(chunk_from_record(chunk_id, chunk_text, record), score) for chunk_id, chunk_text, record, score in rows]

    def _rows(self, terms: list[str], groups: list[Collection[str]], top_k: int) -> list[HitRow]:
        if self._helpers is None:
            # no store-wide lock: each thread has its own searcher (Whoosh readers keep file positions)
            return search_rows(self._current_searcher(), terms, groups, top_k)
        with self._in_flight_lock:
            self._in_flight += 1
            alone = self._in_flight == 1
        try:
            if not alone:
                # others are searching: a free helper process answers, so this process's GIL is left for
                # the rest of their queries; a search alone stays here and pays no pipe
                rows = self._helpers.search(self._generation, terms, groups, top_k)
                if rows is not None:
                    return rows
            with self._searching_here:
                return search_rows(self._current_searcher(), terms, groups, top_k)
        finally:
            with self._in_flight_lock:
                self._in_flight -= 1

    def count(self) -> int:
        with self._lock:
            return self._index.doc_count()

    def _current_searcher(self):
        """This thread's searcher over the latest commit (opened on first use and after each commit)."""
        mine = self._per_thread
        if getattr(mine, "generation", None) != self._generation:
            stale = getattr(mine, "searcher", None)
            with self._lock:
                if stale is not None:
                    self._searchers.remove(stale)
                    stale.close()
                mine.searcher = self._index.searcher(weighting=BM25F(B=self._config.b, K1=self._config.k1))
                mine.generation = self._generation
                self._searchers.append(mine.searcher)
        return mine.searcher

    def _refresh(self) -> None:
        # a searcher another thread may be using is not closed under it: that thread replaces its own
        self._generation += 1

    def _close_searchers(self) -> None:
        for searcher in self._searchers:
            searcher.close()
        self._searchers.clear()
        self._generation += 1

    def compact(self) -> None:
        """Merge every segment into one, so deleted documents leave the segment files (``kb.compact()``)."""
        with self._lock:
            self._close_searchers()  # a searcher holds the old segment files open
            if self._helpers is not None:
                self._helpers.stop()  # theirs too; they start again on the next busy search
            self._index.optimize()
            self._refresh()

    def flush(self) -> None:
        """Every upsert commits; nothing is pending."""

    def close(self) -> None:
        with self._lock:
            self._close_searchers()
            if self._helpers is not None:
                self._helpers.stop()
