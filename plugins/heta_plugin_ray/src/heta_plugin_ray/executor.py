"""``[executor] type = "ray"``: a build's fanned-out work runs on worker actors of a Ray cluster.

Each kind of work (``BatchWork.key``) gets ``num_workers`` actors; an actor opens the models the work needs
once (from the recipe's configs, through the plugins installed where it runs) and then takes batches one
at a time. Batches go to whichever actor is free, results come back to the driver in the batches' order,
and the step writes them there: workers never write, so a batch Ray retries after a lost worker (its
process killed, its node gone) writes nothing twice. Work that raises is a ``BatchFailure``, not retried.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from heta_framework.common.tasks import gather_or_cancel
from heta_framework.common.validators import whole_number
from heta_framework.errors import ExecutorError
from heta_framework.kb.executor import BatchFailure, BatchWork, ModelSource, OnResult

from heta_plugin_ray.worker import BatchWorker

log = logging.getLogger(__name__)

#: read by Ray when it is first imported: "0" keeps a local cluster on 127.0.0.1 (see ``RayExecutor._connect``)
LOCAL_ONLY_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _non_negative(instance: Any, attribute: attrs.Attribute[float], value: float) -> None:
    if value < 0:
        raise ValueError(f"{attribute.name} must be 0 or more, got {value}")


@attrs.frozen
class Resources:
    """What one worker actor asks of the cluster: ``num_cpus = 0.25`` for work that waits on a remote model."""

    num_cpus: float = attrs.field(default=1.0, validator=_non_negative)
    num_gpus: float = attrs.field(default=0.0, validator=_non_negative)


@attrs.frozen
class RayExecutorConfig:
    """``[executor] type = "ray"`` options; per-step resources in ``[executor.resources.<step name>]``."""

    #: ``None``: start a local cluster in this process; ``"auto"``: the cluster ``ray start`` runs on this
    #: machine; ``"ray://host:10001"``: a remote cluster's client server; ``"host:6379"``: its head node
    address: str | None = None
    #: worker actors per kind of work
    num_workers: int = attrs.field(default=2, validator=whole_number(1))
    #: each worker's default resources, and a step's own (``resources.embed_chunks.num_gpus = 1``)
    num_cpus: float = attrs.field(default=1.0, validator=_non_negative)
    num_gpus: float = attrs.field(default=0.0, validator=_non_negative)
    resources: Mapping[str, Resources] = attrs.field(factory=dict)
    #: times Ray restarts a lost worker and runs its batch again
    max_retries: int = attrs.field(default=3, validator=whole_number(0))
    #: seconds to wait for a cluster before saying it cannot be reached
    connect_timeout_s: float = attrs.field(default=10.0, validator=_non_negative)
    #: the address this process's Ray node uses; the local cluster started here stays on the loopback
    #: (127.0.0.1) unless this says otherwise, so it opens no port other machines can reach
    node_ip_address: str | None = None

    def resources_for(self, step: str) -> Resources:
        return self.resources.get(step) or Resources(self.num_cpus, self.num_gpus)


def _check_reachable(address: str, timeout: float) -> None:
    """Fail at once on a head node or client server that does not answer: Ray itself retries for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"expected host:port or ray://host:port, got {address!r}")
    with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
        pass


class RayExecutor:
    name = "ray"
    in_process = False

    def __init__(self, config: RayExecutorConfig):
        self.config = config
        self._pools: dict[tuple[str, Resources], list[Any]] = {}
        self._counts: Counter[str] = Counter()
        self._started_cluster = False

    @classmethod
    def open(cls, config: RayExecutorConfig | None, root: Path) -> RayExecutor:
        return cls(config or RayExecutorConfig())

    # --- the cluster ------------------------------------------------------------------------------

    def _connect(self) -> None:
        # Ray reports usage statistics over the network unless told not to; a build never phones home
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        address = self.config.address
        node_ip = self.config.node_ip_address or (None if address else "127.0.0.1")
        if not address:
            # Ray's switch for single-machine clusters (named for Windows and macOS, where it is on by default):
            # every Ray process of the local cluster then uses the loopback address, never the machine's own
            os.environ.setdefault(LOCAL_ONLY_ENV, "0")
        if address and "RAY_AUTH_MODE" not in os.environ and (Path.home() / ".ray" / "auth_token").is_file():
            # `ray start` turned token authentication on when it found this token: a driver must ask for it too
            # (read when Ray is first imported; a program that imported Ray itself sets RAY_AUTH_MODE=token)
            os.environ["RAY_AUTH_MODE"] = "token"
        import ray

        try:
            if address and address != "auto":
                _check_reachable(address, self.config.connect_timeout_s)
            if ray.is_initialized():  # this process is already connected (a program that set Ray up itself)
                return
            ray.init(
                address=address, include_dashboard=False, log_to_driver=False, configure_logging=False,
                **({"_node_ip_address": node_ip} if node_ip else {}),
                **({} if address else {"num_cpus": os.cpu_count()}),
            )
        except Exception as exc:  # noqa: BLE001 - every way of not reaching a cluster says the same thing
            where = address or "a local cluster"
            raise ExecutorError(
                f"The ray executor could not reach {where} ({type(exc).__name__}: {exc}). Start the cluster "
                "(`ray start --head` on the head node), check [executor] address in the recipe, or remove the "
                "[executor] table to build in this process. The build can be run again: nothing was lost."
            ) from exc
        self._started_cluster = address is None

    def _pool(self, work: BatchWork[Any, Any], models: ModelSource, resources: Resources) -> list[Any]:
        key = (work.key, resources)
        if key not in self._pools:
            import ray

            actor = ray.remote(BatchWorker).options(
                num_cpus=resources.num_cpus, num_gpus=resources.num_gpus,
                max_restarts=self.config.max_retries, max_task_retries=self.config.max_retries, max_concurrency=1,
            )
            configs = {name: models.model_config(name) for name in work.models}
            plugins = {name: models.model_plugin(name) for name in work.models}
            self._pools[key] = [actor.remote(configs, plugins) for _ in range(self.config.num_workers)]
        return self._pools[key]

    # --- ExecutorProtocol ---------------------------------------------------------------------------

    async def map(
        self, work: BatchWork[Any, Any], batches: Sequence[Any], *, models: ModelSource, on_result: OnResult | None = None,
        limit: int | None = None, step: str = "",
    ) -> list[Any]:
        if not batches:
            return []
        await asyncio.to_thread(self._connect)
        import ray

        pool = self._pool(work, models, self.config.resources_for(step))
        pending = list(enumerate(batches))[::-1]
        results: list[Any] = [None] * len(batches)

        async def drive(actor: Any) -> None:
            # one batch at a time per actor; a free actor takes the next batch
            while pending:
                index, batch = pending.pop()
                try:
                    where, result = await actor.run.remote(work, batch)
                    self._counts[f"worker:{where}"] += 1
                except ray.exceptions.RayTaskError as exc:
                    cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else exc
                    result = BatchFailure(index, f"{type(cause).__name__}: {cause}")
                except ray.exceptions.RayActorError as exc:
                    # Ray restarted the worker max_retries times and lost it again: the batch fails, the others go on
                    result = BatchFailure(index, f"the worker was lost ({type(exc).__name__})", attempts=self.config.max_retries + 1)
                    self._counts["lost_workers"] += 1
                results[index] = result
                self._counts["tasks"] += 1
                if isinstance(result, BatchFailure):
                    self._counts["failed"] += 1
                if on_result is not None:
                    await on_result(index, result)

        drivers = pool[: max(1, min(len(pool), limit or len(pool)))]
        await gather_or_cancel(drive(actor) for actor in drivers)
        self._counts["retried"] += await asyncio.to_thread(self._restarts, pool)
        return results

    def _restarts(self, pool: list[Any]) -> int:
        """Restarts of the pool's workers since the last ask (Ray retried their batches)."""
        import ray

        return sum(ray.get([actor.take_restarts.remote() for actor in pool]))

    def counts(self) -> dict[str, Any]:
        workers = {k.split(":", 1)[1]: v for k, v in self._counts.items() if k.startswith("worker:")}
        return {
            "executor": self.name, "tasks": self._counts["tasks"], "failed": self._counts["failed"],
            "retried": self._counts["retried"], "workers": workers,
        }

    def close(self) -> None:
        if not self._pools and not self._started_cluster:
            return
        import ray

        for pool in self._pools.values():
            for actor in pool:
                try:
                    ray.kill(actor)
                except Exception:  # noqa: BLE001 - a worker already gone is what closing wants
                    log.debug("killing a ray worker failed", exc_info=True)
        self._pools.clear()
        if self._started_cluster and ray.is_initialized():
            ray.shutdown()
            self._started_cluster = False
