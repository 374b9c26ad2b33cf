"""Crash-safe file writes: write a temporary file beside the target, fsync, then rename.

A reader never sees half a file; a crash leaves either the old or the new version.
``durable=False`` skips the per-file fsync for bulk objects (thousands per build):
the rename still makes the write all-or-nothing for a crashed process, and the
store syncs once when the step finishes (``flush``) instead of once per file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def replacing(path: Path, *, durable: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` to write to; when the block succeeds, (fsync and)
    rename it over ``path``. For writers that want a file name (``faiss.write_index``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        if durable:
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_bytes_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    with replacing(path, durable=durable) as tmp:
        tmp.write_bytes(data)


def write_json_atomic(path: Path, value: Any) -> None:
    write_bytes_atomic(path, json.dumps(value, ensure_ascii=False, indent=1, sort_keys=False).encode("utf-8"))


def read_json(path: Path, default: Any = None) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default
