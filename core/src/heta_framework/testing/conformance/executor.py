"""``ExecutorSuite``: what every executor (``ExecutorProtocol``) must do, whoever runs the work.

Provide an ``executor`` fixture (a fresh executor; the suite closes it). The work below is plain, picklable
and importable from here, so an executor that ships it to other processes (Ray) runs it unchanged.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import pytest

from heta_framework.contracts.executor import BatchFailure


@attrs.frozen
class Timed:
    """Returns each number squared, the worker's prepared token, and when the batch ran; raises on ``fail_on``."""

    fail_on: int | None = None
    seconds: float = 0.05

    @property
    def key(self) -> str:
        return f"conformance-timed:{self.fail_on}:{self.seconds}"

    @property
    def models(self) -> tuple[str, ...]:
        return ()

    def prepare(self, models: Mapping[str, Any]) -> str:
        return f"{os.getpid()}:{time.monotonic_ns()}"  # a token per prepare call

    async def run(self, prepared: str, batch: Sequence[int]) -> dict[str, Any]:
        started = time.time()
        await asyncio.sleep(self.seconds)
        if self.fail_on is not None and self.fail_on in batch:
            raise ValueError(f"refusing {self.fail_on}")
        return {"squares": [n * n for n in batch], "prepared": prepared, "span": (started, time.time()), "pid": os.getpid()}


class NoModels:
    """A ``ModelSource`` for work that needs no model."""

    def model_config(self, key: str) -> Any:
        raise KeyError(key)

    def open_model(self, key: str) -> Any:
        raise KeyError(key)

    def model_plugin(self, key: str) -> str:
        raise KeyError(key)


def most_at_once(spans: Sequence[tuple[float, float]]) -> int:
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    running = most = 0
    for _, change in events:
        running += change
        most = max(most, running)
    return most


class ExecutorSuite:
    @pytest.fixture
    def executor(self) -> Any:
        raise NotImplementedError("provide an `executor` fixture: a fresh executor (the suite closes it)")

    @pytest.fixture
    def run_map(self, executor: Any) -> Any:
        async def run(work: Any, batches: Sequence[Any], **kwargs: Any) -> list[Any]:
            return await executor.map(work, batches, models=NoModels(), **kwargs)

        yield run
        executor.close()

    async def test_results_come_back_in_the_batches_order(self, run_map):
        results = await run_map(Timed(seconds=0.01), [[n, n + 1] for n in range(0, 16, 2)])
        assert [r["squares"] for r in results] == [[n * n, (n + 1) * (n + 1)] for n in range(0, 16, 2)]

    async def test_work_that_raises_is_a_batch_failure_and_the_rest_finish(self, run_map):
        results = await run_map(Timed(fail_on=3, seconds=0.01), [[1], [2], [3], [4]])
        assert [r["squares"] for i, r in enumerate(results) if i != 2] == [[1], [4], [16]]
        failure = results[2]
        assert isinstance(failure, BatchFailure) and failure.index == 2 and failure.attempts >= 1
        assert "ValueError" in failure.error and "refusing 3" in failure.error

    async def test_each_result_is_handed_over_once_as_it_comes(self, run_map):
        handed: list[tuple[int, Any]] = []

        async def on_result(index: int, result: Any) -> None:
            handed.append((index, result))

        results = await run_map(Timed(fail_on=2, seconds=0.01), [[1], [2], [3]], on_result=on_result)
        assert sorted(i for i, _ in handed) == [0, 1, 2]
        assert all(results[i] == r for i, r in handed)

    async def test_an_exception_from_on_result_stops_the_map_and_is_raised(self, run_map):
        async def on_result(index: int, result: Any) -> None:
            raise OSError("the disk is full")

        with pytest.raises(OSError, match="the disk is full"):
            await run_map(Timed(seconds=0.01), [[1], [2], [3]], on_result=on_result)

    async def test_nothing_to_do_is_an_empty_list(self, run_map):
        assert await run_map(Timed(), []) == []

    async def test_prepare_runs_per_worker_not_per_batch(self, run_map):
        results = await run_map(Timed(seconds=0.01), [[n] for n in range(12)])
        assert len({r["prepared"] for r in results}) < 12

    async def test_limit_bounds_the_batches_in_flight(self, run_map):
        results = await run_map(Timed(seconds=0.2), [[n] for n in range(4)], limit=1)
        assert most_at_once([tuple(r["span"]) for r in results]) == 1

    async def test_counts_name_the_executor_and_every_task(self, executor, run_map):
        await run_map(Timed(seconds=0.01), [[1], [2], [3]])
        counts = executor.counts()
        assert counts["executor"] == executor.name and counts["tasks"] == 3
        assert sum(counts["workers"].values()) == 3

    async def test_says_whether_work_runs_in_this_process(self, executor, run_map):
        # steps keep driver-side behaviour (one shared cache and limiter) only for an in-process executor
        results = await run_map(Timed(seconds=0.01), [[1]])
        assert isinstance(executor.in_process, bool)
        if executor.in_process:
            assert results[0]["pid"] == os.getpid()
