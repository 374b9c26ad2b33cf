"""Load the recipe's local models before the first request, so it does not pay 10-20 s for the embedding model.

Only models that load something in-process (they have a ``model()`` loader, like the
local sentence-transformers client) are warmed: a remote model needs no loading, and a
warm-up call to it would be a billed request at every start.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

log = logging.getLogger(__name__)

WARM_COMPONENTS = ("models.embedding", "models.reranker")


async def warm_up(kb: Any) -> float | None:
    """Open and load the local models the recipe names; returns the seconds it took (``None``: nothing to load)."""
    started = time.perf_counter()
    loaded = False
    for key in WARM_COMPONENTS:
        if not kb.has_component(key):
            continue
        client = kb.get_component(key)
        loader = getattr(client, "model", None)
        if callable(loader):
            loaded = True
            await asyncio.to_thread(loader)
            encode = getattr(client, "encode", None)
            if callable(encode):  # torch's first forward pass is slow too: pay it here, not in a user's query
                await asyncio.to_thread(encode, ["warm-up"])
    if not loaded:
        return None
    seconds = time.perf_counter() - started
    log.info("models ready in %.1f s", seconds)
    return seconds
