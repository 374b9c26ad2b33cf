"""``upsert_chunks`` looks the batch's ids up once, and still replaces stored or repeated ids (last version wins)."""

from __future__ import annotations

from heta_framework.builtin.stores.sqlite_chunks import SQLiteChunkStore
from heta_framework.kb.documents import Chunk


def chunk(chunk_id: str, text: str) -> Chunk:
    return Chunk(id=chunk_id, document_id=chunk_id.split("#")[0], index=0, text=text, start=0, end=len(text), source="s.txt")


def ids_for(store: SQLiteChunkStore, word: str) -> list[str]:
    return sorted(found.id for found, _ in store.search_text(word, 10))


def test_a_batch_mixing_new_stored_and_repeated_ids_keeps_one_row_per_id_with_the_last_text(tmp_path):
    store = SQLiteChunkStore(tmp_path / "chunks.sqlite")
    store.upsert_chunks([chunk("a#0", "walrus tusks"), chunk("b#0", "penguin colony")])
    written = store.upsert_chunks([
        chunk("a#0", "walrus ivory"),  # stored before: replaced
        chunk("c#0", "orca pod"),  # new
        chunk("c#0", "orca hunting"),  # repeated in this batch: the last one stays
    ])
    assert written == 3
    assert store.count() == 3
    assert store.get_chunks(["a#0", "c#0"]) == {"a#0": chunk("a#0", "walrus ivory"), "c#0": chunk("c#0", "orca hunting")}
    # the full-text rows follow: no hit for the replaced texts' words, one row per id for the others
    assert ids_for(store, "tusks") == [] and ids_for(store, "pod") == []
    assert ids_for(store, "walrus") == ["a#0"] and ids_for(store, "orca") == ["c#0"]
    assert ids_for(store, "penguin") == ["b#0"]
    store.close()
