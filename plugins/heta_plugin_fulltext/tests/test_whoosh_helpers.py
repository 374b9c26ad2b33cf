"""Whoosh searches made while another is running go to helper processes (search_processes.py).

Each test holds one search inside this process's searcher (a barrier in
``search_rows``), so the next search finds it busy: that is the only moment a
helper is asked, and it makes the tests deterministic.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator

import pytest
from heta_framework.common.validators import OptionValueError
from heta_framework.kb.documents import Chunk
from heta_plugin_fulltext import WhooshStoreConfig, WhooshTextIndex, whoosh_store

WORDS = ["fox", "whale", "python", "river", "panda", "engine", "violin", "glacier"]


def chunk(number: int) -> Chunk:
    words = " ".join(WORDS[(number + shift) % len(WORDS)] for shift in range(number % 4 + 1))
    text = f"Chunk {number} talks about {words}."
    return Chunk(id=f"d{number % 7}#{number}", document_id=f"d{number % 7}", text=text, index=number, start=0, end=len(text),
                 metadata={"shelf": number % 3})


def ranking(store: WhooshTextIndex, word: str, filters=None) -> list[tuple[str, float, str, int]]:
    return [(hit.id, round(score, 6), hit.text, hit.index) for hit, score in store.search(word, 20, filters)]


@pytest.fixture
def store(tmp_path) -> Iterator[WhooshTextIndex]:
    opened = WhooshTextIndex.open(WhooshStoreConfig(search_processes=2), tmp_path)
    opened.upsert([chunk(n) for n in range(200)])
    yield opened
    opened.close()


def hold_one_search(store: WhooshTextIndex, monkeypatch) -> tuple[threading.Thread, threading.Event]:
    """Start a search that stays inside this process's searcher until the returned event is set."""
    inside, release = threading.Event(), threading.Event()
    search_rows = whoosh_store.search_rows

    def held(searcher, *args):
        if threading.current_thread().name == "held-search":
            inside.set()
            release.wait(30)
        return search_rows(searcher, *args)

    monkeypatch.setattr(whoosh_store, "search_rows", held)
    thread = threading.Thread(target=store.search, args=("fox", 5), name="held-search")
    thread.start()
    assert inside.wait(10)
    return thread, release


def test_a_search_beside_a_running_one_is_answered_by_a_helper_exactly_as_here(store, monkeypatch):
    expected = {word: ranking(store, word) for word in WORDS}
    filtered = ranking(store, "glacier", {"shelf": [0, 2], "document_id": "d3"})
    assert filtered and all(hit_id.startswith("d3#") for hit_id, *_ in filtered)
    assert store.helpers is not None and store.helpers.served == 0  # one at a time: never a helper
    assert store.helpers.processes() == []
    assert store.helpers.wait_started()

    thread, release = hold_one_search(store, monkeypatch)
    try:
        assert {word: ranking(store, word) for word in WORDS} == expected
        assert ranking(store, "glacier", {"shelf": [0, 2], "document_id": "d3"}) == filtered
        assert store.helpers.served == len(WORDS) + 1
    finally:
        release.set()
        thread.join()


def test_helpers_see_every_commit(store, monkeypatch):
    assert store.helpers.wait_started()
    thread, release = hold_one_search(store, monkeypatch)
    try:
        assert ranking(store, "glacier")[0][0] != "new#0"
        store.upsert([Chunk(id="new#0", document_id="new", text="glacier glacier glacier", index=0, start=0, end=23)])
        served = store.helpers.served
        assert ranking(store, "glacier")[0][0] == "new#0"
        assert store.helpers.served == served + 1
        store.delete_documents(["new"])
        assert "new#0" not in [hit_id for hit_id, *_ in ranking(store, "glacier")]
        assert store.helpers.served == served + 2
    finally:
        release.set()
        thread.join()


def test_a_helper_that_dies_loses_no_search(store, monkeypatch, caplog):
    expected = ranking(store, "violin")
    assert store.helpers.wait_started()
    for process in store.helpers.processes():
        process.kill()
        process.wait()
    thread, release = hold_one_search(store, monkeypatch)
    with caplog.at_level(logging.WARNING):
        answered: list = []
        searching = threading.Thread(target=lambda: answered.append(ranking(store, "violin")))
        searching.start()
        # release the held search only once the helpers were tried: released earlier, the search
        # could find this process's searcher free and never ask a helper
        deadline = time.monotonic() + 10
        while "helper process exited" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.01)
        release.set()  # every helper is gone: the search waited for this process's searcher
        searching.join(10)
        thread.join()
    assert answered == [expected]
    assert store.helpers.served == 0
    assert "helper process exited" in caplog.text


def test_closing_the_store_ends_its_helpers(tmp_path):
    store = WhooshTextIndex.open(WhooshStoreConfig(search_processes=2), tmp_path)
    store.upsert([chunk(n) for n in range(20)])
    assert store.helpers.wait_started()
    processes = store.helpers.processes()
    assert len(processes) == 2 and all(process.poll() is None for process in processes)
    store.close()
    assert all(process.poll() is not None for process in processes)


def test_search_processes_0_starts_none(tmp_path, monkeypatch):
    store = WhooshTextIndex.open(WhooshStoreConfig(search_processes=0), tmp_path)
    store.upsert([chunk(n) for n in range(20)])
    assert store.helpers is None and store.concurrent_searches == 1
    expected = ranking(store, "fox")
    thread, release = hold_one_search(store, monkeypatch)
    try:
        assert ranking(store, "fox") == expected  # beside the held one, in its own thread's searcher
    finally:
        release.set()
        thread.join()
    store.close()


def test_search_processes_must_be_a_whole_number_of_at_least_0():
    with pytest.raises(OptionValueError, match="search_processes must be a whole number of at least 0"):
        WhooshStoreConfig(search_processes=-1)
