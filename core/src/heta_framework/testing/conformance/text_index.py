"""``TextIndexStoreSuite``: what every ``stores.text`` backend (``TextIndexStore``) must do."""

from __future__ import annotations

from heta_framework.contracts.stores import TextIndexStore
from heta_framework.testing.conformance.base import StoreSuiteBase, assert_relative_inside, run_in_threads
from heta_framework.testing.conformance.samples import HOSTILE_STRINGS, UNICODE_TEXTS, make_chunk, numbered_chunks, word


class TextIndexStoreSuite(StoreSuiteBase):
    """Subclass it and provide ``store_factory``: ``root -> store`` (the same index again for the same root).

    Set ``segments_cjk = True`` when the factory's analyzer splits Chinese into
    words, so that a word inside a sentence (``上海``) must find it.
    """

    segments_cjk = False

    def search_ids(self, store, text: str, top_k: int = 10, filters=None) -> list[str]:
        return [chunk.id for chunk, _ in store.search(text, top_k, filters)]

    # --- shape -------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, store, kb_root):
        assert isinstance(store, TextIndexStore)
        assert isinstance(store.backend, str) and store.backend
        assert isinstance(store.analyzer, str) and store.analyzer
        store.upsert(numbered_chunks(2))
        store.flush()
        assert_relative_inside(store.relative_paths(), kb_root, server_backed=self.server_backed)

    def test_empty_index(self, store):
        assert store.count() == 0
        assert store.search("anything at all", 5) == []
        assert store.delete_documents(["nobody"]) == 0
        assert store.terms("") == []

    # --- writing -----------------------------------------------------------------------

    def test_search_finds_the_chunk_holding_a_word_first(self, store):
        chunks = numbered_chunks(30)
        assert store.upsert(chunks) == 30
        assert store.count() == 30
        for i in (0, 7, 29):
            results = store.search(word(i), 5)
            assert results[0][0] == chunks[i]  # every field round-trips, metadata included
            assert [score for _, score in results] == sorted((score for _, score in results), reverse=True)
        assert len(store.search("common filler", 4)) == 4

    def test_upsert_replaces_chunks_by_id(self, store):
        store.upsert(numbered_chunks(10))
        replaced = make_chunk("c3", "doc3", "completely new words about zanzibar", index=3)
        assert store.upsert([replaced]) == 1
        assert store.count() == 10
        assert self.search_ids(store, word(3)) == []
        assert store.search("zanzibar", 3) and store.search("zanzibar", 3)[0][0] == replaced

    def test_delete_documents(self, store):
        store.upsert(numbered_chunks(12))
        assert store.delete_documents(["doc1", "doc2", "nobody"]) == 6
        assert store.count() == 6
        assert self.search_ids(store, word(1)) == []
        assert self.search_ids(store, word(0)) == ["c0"]

    # --- filters -----------------------------------------------------------------------

    def test_filters_exact_and_list_means_any_of(self, store):
        store.upsert(numbered_chunks(12))
        assert set(self.search_ids(store, "filler", 50, {"document_id": "doc1"})) == {"c1", "c5", "c9"}
        assert set(self.search_ids(store, "filler", 50, {"document_id": ["doc1", "doc2"]})) == {"c1", "c5", "c9", "c2", "c6", "c10"}
        assert set(self.search_ids(store, "filler", 50, {"source": "/data/doc0.txt"})) == {"c0", "c4", "c8"}
        assert set(self.search_ids(store, "filler", 50, {"topic": "odd", "document_id": "doc1"})) == {"c1", "c5", "c9"}
        assert self.search_ids(store, "filler", 50, {"topic": "odd", "document_id": "doc0"}) == []
        assert self.search_ids(store, "filler", 50, {"document_id": []}) == []
        assert self.search_ids(store, "filler", 50, {"no_such_key": "x"}) == []

    def test_a_long_document_list_follows_every_write(self, store):
        # a caller's readable documents arrive as a filter of thousands of ids, the same one query after query: a
        # backend may remember what it selects, but never past a write
        store.upsert(numbered_chunks(12))
        store.flush()
        readable = frozenset({"doc1", "doc2", *(f"other{i}" for i in range(500))})
        assert set(self.search_ids(store, "filler", 50, {"document_id": readable})) == {"c1", "c5", "c9", "c2", "c6", "c10"}
        store.upsert([make_chunk("late", "other7", "common filler text arriving late")])
        store.flush()
        assert "late" in self.search_ids(store, "filler", 50, {"document_id": readable})
        store.delete_documents(["doc1"])
        store.flush()
        assert set(self.search_ids(store, "filler", 50, {"document_id": readable})) == {"c2", "c6", "c10", "late"}

    # --- hostile and unicode input --------------------------------------------------------

    def test_any_query_text_is_valid(self, store):
        store.upsert(numbered_chunks(5))
        for text in (*HOSTILE_STRINGS, "", "   ", "***", '"', "NOT", "AND OR", "title:", "\x00", "a" * 5000):
            assert isinstance(store.search(text, 3), list), text
            assert isinstance(store.terms(text), list), text

    def test_hostile_ids_and_provenance_round_trip(self, store):
        chunks = [
            make_chunk(f"{s}#{i}", f"doc {s}", f"plain words {word(i)} {s}", index=i, source=s, note=s)
            for i, s in enumerate(HOSTILE_STRINGS)
        ]
        store.upsert(chunks)
        for i, chunk in enumerate(chunks):
            assert store.search(word(i), 3)[0][0] == chunk
            assert self.search_ids(store, "plain", 50, {"document_id": chunk.document_id}) == [chunk.id]
            assert self.search_ids(store, "plain", 50, {"note": chunk.metadata["note"]}) == [chunk.id]
        assert store.delete_documents([chunks[0].document_id]) == 1
        assert store.count() == len(chunks) - 1

    def test_terms_are_deduplicated(self, store):
        terms = store.terms("fox fox fox dog")
        assert len(terms) == len(set(terms)) and len(terms) >= 2

    def test_unicode_and_cjk_text(self, store):
        chunks = [make_chunk(lang, lang, text) for lang, text in UNICODE_TEXTS.items()]
        store.upsert(chunks)
        for chunk in chunks:
            assert store.search(chunk.text, 3)[0][0] == chunk
        assert self.search_ids(store, "Zürichsee", 3)[:1] == ["de"]
        assert self.search_ids(store, "Москва", 3)[:1] == ["ru"]
        if self.segments_cjk:
            assert self.search_ids(store, "上海", 3)[:1] == ["zh"]
            assert self.search_ids(store, "直辖市", 3)[:1] == ["zh"]

    # --- persistence, size, threads --------------------------------------------------------

    def test_persists_across_reopen(self, store, reopen):
        store.upsert(numbered_chunks(20))
        store.delete_documents(["doc3"])
        before = store.search("filler", 20)
        store = reopen(store)
        assert store.count() == 15
        assert store.search("filler", 20) == before
        assert self.search_ids(store, word(4)) == ["c4"]

    def test_large_batch(self, store):
        chunks = numbered_chunks(3000, documents=30)
        assert store.upsert(chunks) == 3000
        assert store.count() == 3000
        for i in (0, 1500, 2999):
            assert self.search_ids(store, word(i), 1) == [f"c{i}"]
        assert store.delete_documents(["doc0"]) == 100

    def test_concurrent_searches_agree_with_sequential_ones(self, store):
        store.upsert(numbered_chunks(200))
        expected = [self.search_ids(store, f"{word(i)} filler", 5) for i in range(12)]
        assert run_in_threads(lambda i: self.search_ids(store, f"{word(i)} filler", 5), 12) == expected

