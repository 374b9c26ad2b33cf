"""Where ``full_text_search`` runs a store's search: in place for tantivy, in a worker thread for Whoosh.

A tantivy search takes a few hundred microseconds, most of it in Rust without the
GIL, so the engine calls it on the event loop; a hop to a thread cost more than
the search (bench_fulltext.py, concurrency). Whoosh is pure Python and may take
tens of milliseconds, so it keeps the event loop free by running in a thread.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from heta_framework.kb.documents import Chunk
from heta_plugin_fulltext import TantivyStoreConfig, TantivyTextIndex, WhooshTextIndex


async def test_search_runs_in_place_only_for_a_store_that_says_so(make_kb, backend, english_documents, monkeypatch):
    kb = await make_kb(english_documents)
    store = kb.get_component("stores.text")
    threads: list[int] = []
    search = type(store).search

    def recording_search(self, *args, **kwargs):
        threads.append(threading.get_ident())
        return search(self, *args, **kwargs)

    monkeypatch.setattr(type(store), "search", recording_search)
    response = await kb.query("clever foxes", mode="full_text_search", top_k=3)
    assert response.results[0].document_id == "fox"
    in_place = threads == [threading.get_ident()]
    assert in_place == (backend == "tantivy")
    assert getattr(store, "searches_in_place", False) == (backend == "tantivy")


def test_tantivy_search_does_not_wait_for_a_writer_holding_its_lock(tmp_path):
    # a search on the event loop must never wait out a commit: a writer holds the store's lock for all of it
    store = TantivyTextIndex.open(TantivyStoreConfig(), tmp_path)
    store.upsert([Chunk(id="a#0", document_id="a", text="glaciers carve valleys", index=0, start=0, end=22)])
    writer_holds_lock, release = threading.Event(), threading.Event()

    def writer() -> None:
        with store._lock:  # what upsert and delete_documents hold from their first write to their commit
            writer_holds_lock.set()
            release.wait(10)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert writer_holds_lock.wait(10)
        found: list[list[str]] = []
        searcher = threading.Thread(target=lambda: found.append([chunk.id for chunk, _ in store.search("glacier", 5)]))
        searcher.start()
        searcher.join(5)
        assert found == [["a#0"]], "the search waited for the writer's lock"
    finally:
        release.set()
        thread.join()
    # after a commit the next search sees the new chunk (the cached searcher was dropped)
    store.upsert([Chunk(id="b#0", document_id="b", text="glacier glacier ice", index=0, start=0, end=19)])
    assert [chunk.id for chunk, _ in store.search("glacier", 5)][0] == "b#0"
    store.close()


@pytest.mark.parametrize("backend", ["whoosh"])
async def test_whoosh_runs_one_search_per_process_at_a_time_and_the_others_wait_on_the_loop(make_kb, english_documents, monkeypatch):
    # pure Python: searches side by side in one process only take turns on the GIL, so the engine lets one run
    # here and one per helper process (search_processes, 2 by default); the rest wait on the event loop
    kb = await make_kb(english_documents)
    store = kb.get_component("stores.text")
    assert store.concurrent_searches == 3
    active, most = [0], [0]
    guard = threading.Lock()
    search = WhooshTextIndex.search

    def slow_search(self, *args, **kwargs):
        with guard:
            active[0] += 1
            most[0] = max(most[0], active[0])
        time.sleep(0.02)  # long enough that free threads would overlap
        try:
            return search(self, *args, **kwargs)
        finally:
            with guard:
                active[0] -= 1

    monkeypatch.setattr(WhooshTextIndex, "search", slow_search)

    async def eight() -> list[str]:
        responses = await asyncio.gather(*(kb.query("clever foxes", mode="full_text_search", top_k=3) for _ in range(8)))
        return [r.results[0].document_id for r in responses]

    assert await eight() == ["fox"] * 8
    assert most[0] == 3
    # the gate is what keeps them apart: without the store's limit the same searches overlap
    monkeypatch.setattr(store, "concurrent_searches", None)
    most[0] = 0
    assert await eight() == ["fox"] * 8
    assert most[0] > 3
