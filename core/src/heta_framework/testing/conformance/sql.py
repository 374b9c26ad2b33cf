"""``SQLStoreSuite``: what every ``stores.sql`` backend (``SQLStore``) must do."""

from __future__ import annotations

import threading

import pytest

from heta_framework.contracts.stores import SQLStore
from heta_framework.testing.conformance.base import StoreSuiteBase, assert_relative_inside, run_in_threads
from heta_framework.testing.conformance.samples import HOSTILE_STRINGS, UNICODE_TEXTS, make_chunk, numbered_chunks, word


class SQLStoreSuite(StoreSuiteBase):
    """Subclass it and provide ``store_factory``: ``root -> store`` (the same store again for the same root)."""

    def search_ids(self, store, text: str, top_k: int = 10, filters=None) -> list[str]:
        return [chunk.id for chunk, _ in store.search_text(text, top_k, filters)]

    # --- shape -------------------------------------------------------------------------

    def test_satisfies_the_protocol(self, store, kb_root):
        assert isinstance(store, SQLStore)
        store.upsert_chunks(numbered_chunks(2))
        store.flush()
        assert_relative_inside(store.relative_paths(), kb_root, server_backed=self.server_backed)

    def test_empty_store(self, store):
        assert store.count() == 0
        assert store.get_chunks(["missing"]) == {}
        assert store.search_text("anything", 5) == []
        assert store.delete_documents(["nobody"]) == 0

    # --- writing -----------------------------------------------------------------------

    def test_get_chunks_returns_what_was_written(self, store):
        chunks = numbered_chunks(20)
        chunks[3] = make_chunk("c3", "doc3", "page three", index=3, page=3, nested={"a": [1, 2.5, None, True]}, flag=False)
        assert store.upsert_chunks(chunks) == 20
        assert store.count() == 20
        found = store.get_chunks(["c3", "c0", "missing"])
        assert found == {"c3": chunks[3], "c0": chunks[0]}
        assert found["c3"].metadata == {"nested": {"a": [1, 2.5, None, True]}, "flag": False}

    def test_upsert_accepts_any_iterable(self, store):
        assert store.upsert_chunks(chunk for chunk in numbered_chunks(5)) == 5
        assert store.count() == 5

    def test_search_finds_the_chunk_holding_a_word_first(self, store):
        chunks = numbered_chunks(30)
        store.upsert_chunks(chunks)
        for i in (0, 13, 29):
            results = store.search_text(word(i), 5)
            assert results[0][0] == chunks[i]
            assert [score for _, score in results] == sorted((score for _, score in results), reverse=True)
        assert len(store.search_text("common filler", 4)) == 4

    def test_upsert_replaces_chunks_by_id(self, store):
        store.upsert_chunks(numbered_chunks(10))
        replaced = make_chunk("c3", "doc9", "completely new words about zanzibar", index=3)
        store.upsert_chunks([replaced])
        assert store.count() == 10
        assert store.get_chunks(["c3"]) == {"c3": replaced}
        assert self.search_ids(store, word(3)) == []
        assert self.search_ids(store, "zanzibar") == ["c3"]

    def test_delete_documents(self, store):
        store.upsert_chunks(numbered_chunks(12))
        assert store.delete_documents(["doc1", "doc2", "nobody"]) == 6
        assert store.count() == 6
        assert store.get_chunks(["c1", "c0"]).keys() == {"c0"}
        assert self.search_ids(store, word(1)) == []

    def test_a_failed_upsert_writes_nothing(self, store):
        store.upsert_chunks(numbered_chunks(3))

        def failing():
            yield make_chunk("c0", "doc0", "overwritten text")
            yield make_chunk("new", "doc9", "new text")
            raise RuntimeError("the source broke half way")

        with pytest.raises(RuntimeError):
            store.upsert_chunks(failing())
        assert store.count() == 3
        assert store.get_chunks(["c0", "new"]) == {"c0": numbered_chunks(3)[0]}
        assert self.search_ids(store, "overwritten") == []

    # --- filters -----------------------------------------------------------------------

    def test_filters_exact_and_list_means_any_of(self, store):
        store.upsert_chunks(numbered_chunks(12))
        assert set(self.search_ids(store, "filler", 50, {"document_id": "doc1"})) == {"c1", "c5", "c9"}
        assert set(self.search_ids(store, "filler", 50, {"document_id": ["doc1", "doc2"]})) == {"c1", "c5", "c9", "c2", "c6", "c10"}
        assert set(self.search_ids(store, "filler", 50, {"source": "/data/doc0.txt"})) == {"c0", "c4", "c8"}
        assert set(self.search_ids(store, "filler", 50, {"topic": "odd", "document_id": "doc1"})) == {"c1", "c5", "c9"}
        assert set(self.search_ids(store, "filler", 50, {"position": [2, 3]})) == {"c2", "c3"}
        assert self.search_ids(store, "filler", 50, {"topic": "odd", "document_id": "doc0"}) == []
        assert self.search_ids(store, "filler", 50, {"document_id": []}) == []
        assert self.search_ids(store, "filler", 50, {"no_such_key": "x"}) == []

    # --- hostile and unicode input --------------------------------------------------------

    def test_any_query_text_is_valid(self, store):
        store.upsert_chunks(numbered_chunks(5))
        for text in (*HOSTILE_STRINGS, "", "   ", "***", '"', "NOT", "AND OR", "NEAR(a b)", "col:", "\x00", "a" * 5000):
            assert isinstance(store.search_text(text, 3), list), text

    def test_hostile_ids_keys_and_values_are_data(self, store):
        chunks = [
            make_chunk(f"{s}#{i}", f"doc {s}", f"plain words {word(i)} {s}", index=i, source=s, **{"note": s, s: s})
            for i, s in enumerate(HOSTILE_STRINGS)
        ]
        store.upsert_chunks(chunks)
        assert store.get_chunks([c.id for c in chunks]) == {c.id: c for c in chunks}
        for i, chunk in enumerate(chunks):
            text = HOSTILE_STRINGS[i]
            assert store.search_text(word(i), 3)[0][0] == chunk
            assert self.search_ids(store, "plain", 50, {"document_id": chunk.document_id}) == [chunk.id]
            assert self.search_ids(store, "plain", 50, {"source": text}) == [chunk.id]
            assert self.search_ids(store, "plain", 50, {text: text}) == [chunk.id]
        assert store.delete_documents([chunks[0].document_id]) == 1
        assert store.count() == len(chunks) - 1

    def test_unicode_and_cjk_text(self, store):
        chunks = [make_chunk(lang, lang, text, lang=lang) for lang, text in UNICODE_TEXTS.items()]
        store.upsert_chunks(chunks)
        assert store.get_chunks(list(UNICODE_TEXTS)) == {c.id: c for c in chunks}
        assert self.search_ids(store, "上海", 3)[:1] == ["zh"]  # a CJK run matches inside a sentence
        assert self.search_ids(store, "東京", 3)[:1] == ["ja"]
        assert self.search_ids(store, "서울은", 3)[:1] == ["ko"]
        assert self.search_ids(store, "Москва", 3)[:1] == ["ru"]
        assert self.search_ids(store, "filler", 3, {"lang": "zh"}) == []
        assert self.search_ids(store, "上海", 3, {"lang": ["zh", "ja"]}) == ["zh"]

    # --- persistence, size, threads --------------------------------------------------------

    def test_persists_across_reopen(self, store, reopen):
        chunks = numbered_chunks(20)
        store.upsert_chunks(chunks)
        store.delete_documents(["doc3"])
        before = store.search_text("filler", 20)
        store = reopen(store)
        assert store.count() == 15
        assert store.search_text("filler", 20) == before
        assert store.get_chunks(["c4"]) == {"c4": chunks[4]}

    def test_large_batch(self, store):
        chunks = numbered_chunks(5000, documents=50)
        assert store.upsert_chunks(chunks) == 5000
        assert store.count() == 5000
        assert len(store.get_chunks([c.id for c in chunks])) == 5000
        for i in (0, 2500, 4999):
            assert self.search_ids(store, word(i), 1) == [f"c{i}"]
        assert store.delete_documents([f"doc{i}" for i in range(10)]) == 1000

    def test_concurrent_reads_agree_with_sequential_ones(self, store):
        store.upsert_chunks(numbered_chunks(200))
        expected = [(self.search_ids(store, word(i), 5), store.get_chunks([f"c{i}"])) for i in range(12)]
        assert run_in_threads(lambda i: (self.search_ids(store, word(i), 5), store.get_chunks([f"c{i}"])), 12) == expected

    def test_readers_see_all_or_nothing_of_a_write(self, store):
        store.upsert_chunks(numbered_chunks(100))
        seen: list[int] = []
        done = threading.Event()

        def read() -> None:
            while not done.is_set():
                seen.append(store.count())

        reader = threading.Thread(target=read)
        reader.start()
        store.upsert_chunks(make_chunk(f"new{i}", "docnew", f"new chunk {i}") for i in range(500))
        done.set()
        reader.join()
        assert set(seen) <= {100, 600}
        assert store.count() == 600
