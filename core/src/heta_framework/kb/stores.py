"""Store types and the small protocols stores satisfy.

A recipe's ``[stores.<slot>]`` names a store type (``type = "faiss"``); the
plugin that registered that type opens it inside the knowledge-base folder.
Embedded defaults need no server: a folder for objects, SQLite for chunks,
FAISS for vectors, Whoosh for full text. Server-backed stores are plugins too.

Optional methods the runner calls when present: ``flush()`` after every step
(persist before the step is marked done) and ``close()`` when the knowledge
base closes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs


@attrs.frozen
class StoreType:
    """What ``register_stores`` registers.

    ``factory(config, root)`` opens the store; ``config`` is an instance of
    ``config_type`` (an attrs class, built from the recipe's options with
    unknown keys rejected) or ``None``; ``root`` is the knowledge-base folder.
    ``default=True`` makes it the store used when the recipe does not name one
    for ``slot``.
    """

    name: str
    slot: str
    factory: Callable[[Any, Path], Any]
    config_type: type | None = None
    default: bool = False
    description: str = ""


@runtime_checkable
class ObjectStoreProtocol(Protocol):
    """Keyed blobs (``raw/``, ``parsed/``, ``chunks/``...). Writes are atomic."""

    def put_bytes(self, key: str, data: bytes) -> None: ...

    def get_bytes(self, key: str) -> bytes: ...

    def put_json(self, key: str, value: Any) -> None: ...

    def get_json(self, key: str) -> Any: ...

    def exists(self, key: str) -> bool: ...

    def delete(self, key: str) -> None: ...

    def keys(self, prefix: str = "") -> Iterator[str]: ...
