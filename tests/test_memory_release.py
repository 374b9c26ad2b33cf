"""``release_freed_memory`` hands freed heap pages back to the system (build memory, issue 14)."""

from __future__ import annotations

import ctypes

import pytest
from heta_framework.common.memory import _glibc, release_freed_memory


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(_glibc() is None, reason="malloc_trim is glibc's")
def test_release_gives_freed_heap_pages_back_to_the_system():
    libc = _glibc()
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    block = 64 * 1024  # below glibc's mmap threshold: from the heap, as a pass's small activations are
    blocks = [libc.malloc(block) for _ in range(2048)]  # 128 MB
    for address in blocks:
        ctypes.memset(address, 1, block)  # touched: resident
    before = resident_mb()
    for address in blocks[:-1:2]:  # every other block: holes a plain free() keeps, the heap's top stays in use
        libc.free(address)
    after_free = resident_mb()
    release_freed_memory()
    after_release = resident_mb()
    for address in blocks[1::2]:
        libc.free(address)
    assert before - after_free < 16  # free() alone keeps the holes resident
    assert after_free - after_release > 40  # ~64 MB of holes go back
