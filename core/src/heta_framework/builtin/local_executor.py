"""``[executor] type = "local"`` (the default): fanned-out work runs in this process, on its event loop.

Batches run ``concurrency`` at a time, so a remote model's round trips overlap (a local model merges
concurrent calls itself). The work uses the clients the knowledge base already opened: nothing loads twice.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.common import tracing
from heta_framework.common.tasks import gather_or_cancel
from heta_framework.common.validators import positive_whole_number
from heta_framework.contracts.executor import BatchFailure, BatchWork, ExecutorType, ModelSource, OnResult


@attrs.frozen
class LocalExecutorConfig:
    #: batches in flight at once (per map call), unless the step sets its own bound
    concurrency: int = attrs.field(default=4, validator=positive_whole_number)


class LocalExecutor:
    name = "local"
    in_process = True

    def __init__(self, config: LocalExecutorConfig | None = None):
        self.config = config or LocalExecutorConfig()
        self._counts: Counter[str] = Counter()

    async def map(
        self, work: BatchWork[Any, Any], batches: Sequence[Any], *, models: ModelSource, on_result: OnResult | None = None,
        limit: int | None = None, step: str = "",
    ) -> list[Any]:
        prepared = work.prepare({key: models.open_model(key) for key in work.models})
        gate = asyncio.Semaphore(limit or self.config.concurrency)
        results: list[Any] = [None] * len(batches)

        async def one(index: int, batch: Any) -> None:
            async with gate:
                # one span per batch, a child of the step's: where a slow or failing batch of a build shows up
                with tracing.span("heta.batch", {"heta.step": step, "heta.batch.index": index, "heta.batch.size": _size(batch),
                                                 "heta.executor": self.name}) as span:
                    try:
                        result: Any = await work.run(prepared, batch)
                    except Exception as exc:  # noqa: BLE001 - the step reports it and goes on
                        result = BatchFailure(index, f"{type(exc).__name__}: {exc}")
                        tracing.set_attributes(span, {"error.type": type(exc).__name__})
                results[index] = result
                self._counts["tasks"] += 1
                if on_result is not None:
                    await on_result(index, result)

        # a failing on_result (or a cancel) stops the other batches; the ones that finished were handed over
        await gather_or_cancel(one(i, batch) for i, batch in enumerate(batches))
        return results

    def counts(self) -> dict[str, Any]:
        return {"executor": self.name, "tasks": self._counts["tasks"], "workers": {"local": self._counts["tasks"]}}

    def close(self) -> None:
        pass


def _size(batch: Any) -> int | None:
    try:
        return len(batch)
    except TypeError:
        return None


def open_local_executor(config: LocalExecutorConfig | None, root: Path) -> LocalExecutor:
    return LocalExecutor(config)


LOCAL_EXECUTOR = ExecutorType(
    "local", open_local_executor, LocalExecutorConfig, default=True, description="in this process, on its event loop",
)
