"""``ObjectStoreSuite``: what every ``stores.objects`` backend (``ObjectStoreProtocol``) must do."""

from __future__ import annotations

import threading

import pytest

from heta_framework.contracts.stores import ObjectStoreProtocol
from heta_framework.testing.conformance.base import StoreSuiteBase, run_in_threads
from heta_framework.testing.conformance.samples import HOSTILE_STRINGS, UNICODE_TEXTS


class ObjectStoreSuite(StoreSuiteBase):
    """Subclass it and provide ``store_factory``: ``root -> store`` (the same store again for the same root)."""

    def test_satisfies_the_protocol(self, store):
        assert isinstance(store, ObjectStoreProtocol)

    def test_empty_store(self, store):
        assert list(store.keys()) == []
        assert list(store.keys("raw/")) == []
        assert not store.exists("raw/a.txt")
        store.delete("raw/a.txt")  # deleting what is not there is fine
        with pytest.raises(FileNotFoundError):
            store.get_bytes("raw/a.txt")
        with pytest.raises(FileNotFoundError):
            store.get_json("parsed/a.json")

    def test_bytes_and_json_round_trip_and_overwrite(self, store):
        store.put_bytes("raw/a.bin", bytes(range(256)))
        assert store.get_bytes("raw/a.bin") == bytes(range(256))
        value = {"text": "x", "numbers": [1, 2.5, None, True], "nested": {"empty": {}}}
        store.put_json("parsed/a.json", value)
        assert store.get_json("parsed/a.json") == value
        store.put_bytes("raw/a.bin", b"")
        assert store.get_bytes("raw/a.bin") == b""
        assert store.exists("raw/a.bin") and store.exists("parsed/a.json")

    def test_delete(self, store):
        store.put_bytes("raw/a", b"1")
        store.put_bytes("raw/b", b"2")
        store.delete("raw/a")
        assert not store.exists("raw/a") and store.exists("raw/b")
        assert list(store.keys()) == ["raw/b"]

    def test_keys_by_prefix_are_sorted(self, store):
        for key in ("raw/b.txt", "raw/a.txt", "raw/sub/c.txt", "parsed/a.json", "rawish/x"):
            store.put_bytes(key, b".")
        assert list(store.keys()) == sorted(["raw/b.txt", "raw/a.txt", "raw/sub/c.txt", "parsed/a.json", "rawish/x"])
        assert list(store.keys("raw/")) == ["raw/a.txt", "raw/b.txt", "raw/sub/c.txt"]
        assert list(store.keys("raw/a.txt")) == ["raw/a.txt"]
        assert list(store.keys("nothing/")) == []

    @pytest.mark.parametrize("key", ["../outside", "/etc/passwd", "raw/../../outside"])
    def test_keys_cannot_leave_the_store(self, store, key, kb_root):
        with pytest.raises(ValueError):
            store.put_bytes(key, b"x")
        with pytest.raises(ValueError):
            store.get_bytes(key)
        assert not (kb_root.parent / "outside").exists()

    def test_hostile_and_unicode_keys_and_values(self, store):
        safe = [s for s in HOSTILE_STRINGS if "/" not in s and "\n" not in s and "\t" not in s]
        keys = [f"raw/{s}" for s in safe] + [f"parsed/{text}.json" for text in UNICODE_TEXTS.values()]
        for key in keys:
            store.put_json(key, {"key": key, "values": list(UNICODE_TEXTS.values())})
        for key in keys:
            assert store.get_json(key) == {"key": key, "values": list(UNICODE_TEXTS.values())}
        assert sorted(store.keys()) == sorted(keys)

    def test_persists_across_reopen(self, store, reopen):
        store.put_bytes("raw/a", b"kept")
        store.put_json("parsed/a.json", {"上海": 1})
        store.put_bytes("raw/gone", b"x")
        store.delete("raw/gone")
        store = reopen(store)
        assert store.get_bytes("raw/a") == b"kept"
        assert store.get_json("parsed/a.json") == {"上海": 1}
        assert list(store.keys()) == ["parsed/a.json", "raw/a"]

    def test_large_batch(self, store):
        for i in range(1000):
            store.put_json(f"chunks/{i:04d}.json", {"i": i})
        store.flush()
        assert len(list(store.keys("chunks/"))) == 1000
        assert store.get_json("chunks/0999.json") == {"i": 999}

    def test_concurrent_writers_of_distinct_keys(self, store):
        run_in_threads(lambda i: [store.put_json(f"t{i}/{j}.json", {"i": i, "j": j}) for j in range(20)], 8)
        assert len(list(store.keys())) == 160
        assert all(store.get_json(f"t{i}/19.json") == {"i": i, "j": 19} for i in range(8))

    def test_a_reader_never_sees_half_an_object(self, store):
        old, new = b"a" * 200_000, b"b" * 300_000
        store.put_bytes("raw/big", old)
        seen: set[bytes] = set()
        done = threading.Event()

        def read() -> None:
            while not done.is_set():
                data = store.get_bytes("raw/big")
                seen.add(data[:1] + str(len(data)).encode())

        reader = threading.Thread(target=read)
        reader.start()
        for _ in range(20):
            store.put_bytes("raw/big", new)
            store.put_bytes("raw/big", old)
        done.set()
        reader.join()
        assert seen <= {b"a200000", b"b300000"}
