"""Where a build's fanned-out work runs: the executor contract.

A step that has per-batch work (embedding chunks, asking a language model about each chunk) describes it
as a ``BatchWork``, a small picklable object, and hands it to ``context.map_batches(work, batches)``. The
recipe's executor runs it: ``local`` (core's default) in this process, or another registered through
``register_executors`` (``heta-plugin-ray`` runs it on a Ray cluster). Whatever runs it, the step gets
one result per batch, in the batches' order, and writes them itself: work never writes to a store, so a
batch retried after a lost worker writes nothing twice, and any executor gives the same knowledge base.

What must see the whole knowledge base (deduplication, graph merge) is not fanned out: a step does it
itself, on the driver.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

import attrs

B = TypeVar("B")
R = TypeVar("R")


class BatchWork(Protocol[B, R]):
    """One kind of work a step fans out. It is pickled to the workers, so it holds plain values (names,
    options), never an open client or store.

    ``models`` are the component keys (``"models.embedding"``) the work needs; ``prepare(models)`` runs once
    per worker and per ``key`` with those components open (a model loaded once, not per batch) and returns
    what ``run`` gets; ``run(prepared, batch)`` returns the batch's result (plain, picklable data).
    """

    @property
    def key(self) -> str:
        """Workers keep what ``prepare`` made under this key: equal keys share it."""
        ...

    @property
    def models(self) -> tuple[str, ...]: ...

    def prepare(self, models: Mapping[str, Any]) -> Any: ...

    async def run(self, prepared: Any, batch: B) -> R: ...


@attrs.frozen
class BatchFailure:
    """A batch whose work raised (after the executor's retries): the step reports it and goes on."""

    index: int
    error: str
    attempts: int = 1


class ModelSource(Protocol):
    """What an executor may open models from: the driver's open clients, and their recipe configs for workers
    elsewhere (which open their own through the plugins installed there; ``model_plugin`` names the plugin
    that provides a model, so a worker can load that one alone)."""

    def model_config(self, key: str) -> Any: ...

    def open_model(self, key: str) -> Any: ...

    def model_plugin(self, key: str) -> str: ...


#: called with (batch index, result) as each batch finishes, on the driver's event loop
OnResult = Callable[[int, Any], Awaitable[None]]


class ExecutorProtocol(Protocol):
    """Runs ``BatchWork`` over batches. ``map`` returns one entry per batch, in order: the work's result, or a
    ``BatchFailure`` when its work raised. ``on_result`` is awaited once per batch as it finishes (a step
    caches results as they come, so a stopped build keeps them); an exception from it stops the map and is
    raised. ``limit`` bounds the batches in flight (a remote API's rate), whatever the workers; ``step`` names
    the step asking (an executor may give steps their own resources). A lost
    worker is the executor's to retry; a batch is never reported twice. ``counts()`` says what ran where
    (tasks per worker, retries) for the build report."""

    @property
    def name(self) -> str: ...

    @property
    def in_process(self) -> bool:
        """True when work runs in the driver's process, on its event loop (``local``): a step may then share
        driver-side objects with it (one cache, one limiter) instead of sending batches."""
        ...

    async def map(
        self, work: BatchWork[B, R], batches: Sequence[B], *, models: ModelSource, on_result: OnResult | None = None,
        limit: int | None = None, step: str = "",
    ) -> list[R | BatchFailure]: ...

    def counts(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


@attrs.frozen
class ExecutorType:
    """What ``register_executors`` registers. ``factory(config, root)`` opens the executor; ``config`` is an
    instance of ``config_type`` built from the recipe's ``[executor]`` options (unknown keys rejected), or
    ``None``; ``root`` is the knowledge-base folder. ``default=True``: used when the recipe names none."""

    name: str
    factory: Callable[[Any, Path], ExecutorProtocol]
    config_type: type | None = None
    default: bool = False
    description: str = ""


def batched(items: Sequence[B], size: int) -> list[Sequence[B]]:
    """``items`` in consecutive batches of ``size`` (the last may be shorter)."""
    return [items[start : start + size] for start in range(0, len(items), size)]
