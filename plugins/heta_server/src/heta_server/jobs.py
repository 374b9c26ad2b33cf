"""Writes (builds, removals) as background jobs, one at a time, with progress at ``GET /api/v1/jobs/{id}``.

One ``asyncio.Lock`` serialises the writes of this server; the knowledge base's writer lock
(``heta_framework.kb.lock``) serialises them with other processes. A write asked for while
another runs is refused (409 ``WriteInProgress``, naming the running job) rather than queued:
the client decides whether to wait, and a burst of uploads cannot pile up unbounded work.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
from heta_framework.common.secrets import redact
from heta_framework.errors import HetaError

from heta_server.errors import ApiError

log = logging.getLogger(__name__)

#: finished jobs kept for ``GET /api/v1/jobs/{id}``
KEEP_FINISHED = 100


@attrs.define
class StageProgress:
    description: str
    total: int | None
    done: int = 0


@attrs.define
class Job:
    id: str
    kind: str
    status: str = "running"  # running -> done | failed
    created: float = attrs.field(factory=time.time)
    finished: float | None = None
    stages: list[StageProgress] = attrs.field(factory=list)
    result: Any = None
    error: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "created": self.created,
            "finished": self.finished,
            "progress": [{"stage": s.description, "done": s.done, "total": s.total} for s in self.stages],
            "result": self.result,
            "error": self.error,
        }

    def progress(self, description: str, total: int | None) -> _Handle:
        """A ``ProgressFactory`` for ``kb.build(progress=...)``: each step's progress is one stage."""
        stage = StageProgress(description, total)
        self.stages.append(stage)
        return _Handle(stage)


@attrs.define
class _Handle:
    stage: StageProgress

    def advance(self, amount: int = 1) -> None:
        self.stage.done += amount

    def close(self) -> None:
        pass


class JobRunner:
    def __init__(self, secrets: list | None = None):
        self._write_lock = asyncio.Lock()
        self._jobs: dict[str, Job] = {}
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task] = set()
        self._secrets = list(secrets or [])

    def get(self, job_id: str) -> Job:
        job = self._jobs.get(job_id)
        if job is None:
            raise ApiError(404, "UnknownJob", f"No job {job_id!r} on this server (finished jobs are kept until {KEEP_FINISHED} newer ones).")
        return job

    def running(self) -> Job | None:
        return next((job for job in self._jobs.values() if job.status == "running"), None)

    async def start(self, kind: str, work: Callable[[Job], Awaitable[Any]]) -> Job:
        """Start ``work(job)`` in the background, or refuse with 409 when another write runs."""
        if self._write_lock.locked():
            running = self.running()
            raise ApiError(
                409, "WriteInProgress",
                f"Another write ({running.kind if running else 'a job'}) is running on this server; "
                f"wait for job {running.id if running else '?'} to finish (GET /api/v1/jobs/ID), then retry.",
                job_id=running.id if running else None,
            )
        # taken here, not in the task, so a request arriving before the task starts is refused; an unheld
        # asyncio.Lock is acquired without suspending, so nothing can slip in between the check and this
        await self._write_lock.acquire()
        job = Job(id=str(next(self._ids)), kind=kind)
        self._jobs[job.id] = job
        self._forget_old()
        task = asyncio.get_running_loop().create_task(self._run(job, work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return job

    async def _run(self, job: Job, work: Callable[[Job], Awaitable[Any]]) -> None:
        try:
            job.result = await work(job)
            job.status = "done"
        except HetaError as exc:
            job.status = "failed"
            job.error = {"code": type(exc).__name__, "message": redact(str(exc), *self._secrets)}
        except Exception as exc:  # a bug in a step or plugin: the job fails, the server keeps serving
            log.error("job %s (%s) failed with %s", job.id, job.kind, type(exc).__name__)
            job.status = "failed"
            job.error = {"code": "InternalError", "message": f"The job met an unexpected {type(exc).__name__}; see the server log."}
        finally:
            job.finished = time.time()
            self._write_lock.release()

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.status != "running"]
        for job in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._jobs[job.id]

    async def wait_idle(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
