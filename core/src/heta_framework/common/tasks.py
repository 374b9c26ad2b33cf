"""``gather_or_cancel``: run coroutines together; the first failure stops the rest and is raised."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import Any


async def gather_or_cancel(awaitables: Iterable[Awaitable[Any]]) -> None:
    """Await every one; when one raises (or the caller is cancelled), cancel the others, wait for them to wind
    down (so what they finished, such as a cached batch, is kept), then raise the first failure as it is."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
