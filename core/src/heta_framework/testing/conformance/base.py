"""What every store suite shares: the ``store_factory`` fixture to provide, ``store`` and ``reopen``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


class StoreSuiteBase:
    """``store``: a fresh store in ``tmp_path / "kb"``; ``reopen(store)``: flush, close, open the same folder again.

    A backend that keeps its data on a server (PostgreSQL, Milvus) sets ``server_backed = True``:
    its ``relative_paths`` are then expected empty instead of naming files in the folder.
    """

    server_backed = False

    @pytest.fixture
    def store_factory(self) -> Callable[[Path], Any]:
        raise NotImplementedError("provide a `store_factory` fixture: knowledge-base folder -> store")

    @pytest.fixture
    def kb_root(self, tmp_path: Path) -> Path:
        return tmp_path / "kb"

    @pytest.fixture
    def _open_stores(self) -> Iterator[list[Any]]:
        opened: list[Any] = []
        yield opened
        for store in opened:
            close_store(store)

    @pytest.fixture
    def store(self, store_factory: Callable[[Path], Any], kb_root: Path, _open_stores: list[Any]) -> Any:
        store = store_factory(kb_root)
        _open_stores.append(store)
        return store

    @pytest.fixture
    def reopen(self, store_factory: Callable[[Path], Any], kb_root: Path, _open_stores: list[Any]) -> Callable[[Any], Any]:
        def again(store: Any) -> Any:
            flush = getattr(store, "flush", None)
            if flush is not None:
                flush()
            if store in _open_stores:
                _open_stores.remove(store)
            close_store(store)
            fresh = store_factory(kb_root)
            _open_stores.append(fresh)
            return fresh

        return again


def close_store(store: Any) -> None:
    close = getattr(store, "close", None)
    if close is not None:
        close()


def run_in_threads(work: Callable[[int], Any], count: int) -> list[Any]:
    """``work(i)`` for i in range(count), all started at once; results in order; a thread's error fails the test."""
    results: list[Any] = [None] * count
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def run(i: int) -> None:
        try:
            start.wait()
            results[i] = work(i)
        except BaseException as exc:  # noqa: BLE001  (re-raised in the test thread below)
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results


def assert_relative_inside(paths: list[str], kb_root: Path, *, server_backed: bool = False) -> None:
    if server_backed:
        # a server-backed store keeps nothing in the folder: no cleanup plan may name a local path
        assert paths == [], paths
        return
    assert paths, "a store owns at least one file or folder"
    for path in paths:
        assert not Path(path).is_absolute() and ".." not in Path(path).parts, path
        assert (kb_root / path).resolve().is_relative_to(kb_root.resolve()), path
