"""``in_thread``: a worker thread's value belongs to the caller alone (memory of build steps, issue 14)."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest
from heta_framework.common.threads import in_thread


class Payload:
    """Stands for a step's big result (stored entities, extraction records)."""


async def test_the_value_is_gone_once_the_caller_drops_it():
    caller = threading.get_ident()
    ran_in: list[int] = []

    def work(size: int, *, label: str) -> Payload:
        ran_in.append(threading.get_ident())
        payload = Payload()
        payload.items = [label] * size  # type: ignore[attr-defined]
        return payload

    value = await in_thread(work, 3, label="x")
    assert value.items == ["x", "x", "x"]  # type: ignore[attr-defined]
    assert ran_in and ran_in[0] != caller  # it ran in a worker thread
    gone = weakref.ref(value)
    del value
    gc.collect()
    assert gone() is None  # nothing of the event loop's still holds it (asyncio.to_thread's future did, on 3.11)


async def test_an_error_in_the_thread_reaches_the_caller():
    def fail() -> None:
        raise ValueError("bad input")

    with pytest.raises(ValueError, match="bad input"):
        await in_thread(fail)
