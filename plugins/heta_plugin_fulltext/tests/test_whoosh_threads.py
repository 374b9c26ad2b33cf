"""The Whoosh store searches from many threads at once (one searcher per thread, no store-wide lock)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from heta_framework.kb.documents import Chunk
from heta_plugin_fulltext import WhooshStoreConfig, WhooshTextIndex

WORDS = ["fox", "whale", "python", "river", "panda", "engine", "violin", "glacier"]


def chunk(number: int) -> Chunk:
    words = " ".join(WORDS[(number + shift) % len(WORDS)] for shift in range(number % 4 + 1))
    text = f"Chunk {number} talks about {words}."
    return Chunk(id=f"d{number % 7}#{number}", document_id=f"d{number % 7}", text=text, index=number, start=0, end=len(text))


def ranking(store: WhooshTextIndex, word: str) -> list[tuple[str, float]]:
    return [(hit.id, round(score, 6)) for hit, score in store.search(word, 20)]


def test_concurrent_searches_match_sequential_ones_and_see_every_commit(tmp_path):
    store = WhooshTextIndex.open(WhooshStoreConfig(), tmp_path)
    store.upsert([chunk(n) for n in range(200)])
    expected = {word: ranking(store, word) for word in WORDS}
    threads_used: set[int] = set()

    def search(word: str) -> list[tuple[str, float]]:
        threads_used.add(threading.get_ident())
        return ranking(store, word)

    with ThreadPoolExecutor(8) as pool:
        found = list(pool.map(search, WORDS * 25))
        assert found == [expected[word] for word in WORDS * 25]
        assert len(threads_used) > 1
        # a commit is seen by every thread's searcher on its next query, not only by the writer's
        store.upsert([Chunk(id="new#0", document_id="new", text="glacier glacier glacier", index=0, start=0, end=23)])
        assert all(results[0][0] == "new#0" for results in pool.map(lambda word: ranking(store, word), ["glacier"] * 16))
    store.close()


def test_a_scopes_large_document_set_filters_exactly_and_follows_commits(tmp_path):
    from heta_plugin_fulltext.records import filter_groups

    store = WhooshTextIndex.open(WhooshStoreConfig(), tmp_path)
    store.upsert([chunk(n) for n in range(200)])
    readable = frozenset({"d1", "d3", *(f"unknown-{i}" for i in range(100))})  # a scope's set: larger than LARGE_GROUP
    assert filter_groups({"document_id": readable})[0] is filter_groups({"document_id": readable})[0]  # made once
    for word in WORDS[:3]:
        hits = store.search(word, 50, {"document_id": readable})
        everything = [(c.id, s) for c, s in store.search(word, 200) if c.document_id in {"d1", "d3"}]
        assert [(c.id, s) for c, s in hits] == everything[:50] and hits
    store.upsert([Chunk(id="d3#new", document_id="d3", text="fox fox fox fox", index=0, start=0, end=15)])
    assert store.search("fox", 1, {"document_id": readable})[0][0].id == "d3#new"  # the kept selection is per commit
