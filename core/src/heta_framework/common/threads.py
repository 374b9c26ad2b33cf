"""``in_thread``: ``asyncio.to_thread`` that does not keep the result alive after the caller lets it go.

On CPython 3.11 the future a coroutine awaited kept its result after the ``await``
returned it: something of the event loop's (through the handle that woke the
task) still held the finished future. A build step that read 55k stored entities
in a worker thread and then dropped them (``del``) kept them all in memory while it
embedded, and an extraction step's results stayed until the step after next
(39 MB at the 10k bench tier). Here the worker hands the value over in a box the
caller empties, so the future's own result is None and only the caller holds the value.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_thread(function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` in a worker thread (``asyncio.to_thread``); its value belongs to the caller alone."""
    box: list[T] = []
    await asyncio.to_thread(lambda: box.append(function(*args, **kwargs)))
    return box.pop()
