"""Give memory the process freed back to the operating system (``malloc_trim``).

Called after each build step (a step's Python objects and C buffers are gone
by then) and by the local embedding provider after each batch of passes.
Torch allocates each pass's activations with malloc. glibc keeps freed blocks in
its heaps for reuse, and with passes of varied shapes (token-budget batches) the
heaps fragment: embedding 3,000 chunks left the process 660 MB above the loaded
model, where trimming after every call of 128 texts left it 118 MB above, for
the same time within 3% (MiniLM, 2 cores; issue 14). A fixed mmap threshold
(``MALLOC_MMAP_THRESHOLD_``) also bounds it but made the same work 31% slower.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from typing import Any


@functools.cache
def _glibc() -> Any | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None  # musl, macOS, Windows: nothing to do


def release_freed_memory() -> None:
    """``malloc_trim(0)`` where the C library is glibc; a no-op elsewhere."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
