"""Batch work the tests fan out: pickled by value to the Ray workers (``ray.cloudpickle.register_pickle_by_value``)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs


@attrs.frozen
class Square:
    """Squares numbers; raises on a batch holding ``fail_on``; the first run of the batch holding ``hold_on``
    writes its worker's pid to ``<hold>/<hold_on>.pid`` and waits ``seconds`` (time for a test to kill it)."""

    fail_on: int | None = None
    hold: str | None = None
    hold_on: int | None = None
    seconds: float = 0.0

    @property
    def key(self) -> str:
        return f"square:{self.fail_on}:{self.hold}"

    @property
    def models(self) -> tuple[str, ...]:
        return ()

    def prepare(self, models: Mapping[str, Any]) -> Any:
        return os.getpid()

    async def run(self, prepared: Any, batch: Sequence[int]) -> list[int]:
        if self.fail_on is not None and self.fail_on in batch:
            raise ValueError(f"cannot square {self.fail_on}")
        if self.hold is not None and self.hold_on in batch:
            marker = Path(self.hold) / f"{self.hold_on}.pid"
            if not marker.exists():
                # written then renamed: the test polls for the marker and must never read it empty
                partial = marker.with_suffix(".partial")
                partial.write_text(str(os.getpid()))
                partial.replace(marker)
                await asyncio.sleep(self.seconds)
        return [n * n for n in batch]
