"""The SQLite chunk store reads on one connection per thread, and SQLite lets those threads run at once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading

import pytest
from heta_framework.builtin.stores.sqlite_chunks import SQLiteChunkStore
from heta_framework.common.sqlite import ReaderConnections
from heta_framework.kb.documents import Chunk


def chunk(i: int, text: str) -> Chunk:
    return Chunk(id=f"c{i}", document_id=f"d{i}", index=0, text=text, start=0, end=len(text), source=f"d{i}.txt")


def test_each_thread_reads_on_its_own_connection_and_sees_committed_writes(tmp_path):
    store = SQLiteChunkStore(tmp_path / "chunks.sqlite")
    store.upsert_chunks([chunk(0, "alpha beta")])
    seen: dict[str, object] = {}

    def read(name: str) -> None:
        seen[name] = (store._readers.get(), [c.id for c, _ in store.search_text("alpha", 5)])

    threads = [threading.Thread(target=read, args=(f"t{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    connections = {id(connection) for connection, _ in seen.values()}
    assert len(connections) == 3 and id(store._db) not in connections
    assert all(ids == ["c0"] for _, ids in seen.values())
    # a write made after a reader connection exists is visible to it (no stale snapshot held open)
    store.upsert_chunks([chunk(1, "alpha gamma")])
    assert sorted(c.id for c, _ in store.search_text("alpha", 5)) == ["c0", "c1"]
    store.close()


def test_reader_connections_never_write(tmp_path):
    path = tmp_path / "x.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE t (x)")
    readers = ReaderConnections(path)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        readers.get().execute("INSERT INTO t VALUES (1)")
    readers.close()


def test_a_finished_threads_connection_is_closed_when_the_next_opens(tmp_path):
    path = tmp_path / "x.sqlite"
    sqlite3.connect(path).execute("CREATE TABLE t (x)")
    readers = ReaderConnections(path)
    opened: list[sqlite3.Connection] = []
    thread = threading.Thread(target=lambda: opened.append(readers.get()))
    thread.start()
    thread.join()
    readers.get()  # this thread's own: the finished thread's goes
    with pytest.raises(sqlite3.ProgrammingError):
        opened[0].execute("SELECT 1")
    readers.close()
    with pytest.raises(sqlite3.ProgrammingError):
        readers.get()


def test_closing_the_store_closes_every_reader(tmp_path):
    store = SQLiteChunkStore(tmp_path / "chunks.sqlite")
    store.upsert_chunks([chunk(0, "alpha")])
    store.count()
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        store.count()


def test_importing_heta_turns_off_sqlites_process_wide_memory_statistics():
    # a fresh process: the setting only takes before SQLite initialises; with it off SQLite counts no memory
    script = (
        "import heta_framework, ctypes, sqlite3, _sqlite3\n"
        "db = sqlite3.connect(':memory:'); db.execute('CREATE TABLE t (x)'); db.executemany('INSERT INTO t VALUES (?)', [(i,) for i in range(1000)])\n"
        "print(ctypes.CDLL(_sqlite3.__file__).sqlite3_memory_used())\n"
    )
    used = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert used == "0"


def test_after_sqlite3_was_imported_the_setting_is_a_harmless_no_op():
    script = (
        "import sqlite3\n"
        "from heta_framework.common.sqlite_threads import turn_off_memory_statistics\n"
        "print(turn_off_memory_statistics(), sqlite3.connect(':memory:').execute('SELECT 1').fetchone()[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "1"]
