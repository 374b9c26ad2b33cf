"""Writes (builds, removals) as background jobs, one at a time, with progress at ``GET /api/v1/jobs/{id}``.

Each job's record is also kept in the knowledge base's state (its ``server_jobs`` cache, on whatever backend the
state lives), written when the job starts and when it ends, so a client can learn how its write ended after the
server was restarted, even after a SIGKILL: a job recorded as running that no live server runs is reported
``interrupted``, with the state its documents actually reached.

One ``asyncio.Lock`` serialises the writes of this server; the knowledge base's writer lock
(``heta_framework.kb.lock``) serialises them with other processes. A write asked for while
another runs is refused (409 ``WriteInProgress``, naming the running job) rather than queued:
the client decides whether to wait, and a burst of uploads cannot pile up unbounded work.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
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
    #: the documents the job writes, when known up front (a removal's ids, documents sent with ids)
    documents: list[str] = attrs.field(factory=list)

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
            "documents": self.documents,
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


#: the knowledge-base state cache the job records live in
JOBS_CACHE = "server_jobs"


class JobRecords:
    """Job records in the knowledge base's state, so they outlive the server process."""

    def __init__(self, kb: Any):
        self._kb = kb

    def save(self, job: Job) -> None:
        try:
            self._kb.state.cache(JOBS_CACHE).put_many({job.id: json.dumps(job.to_dict()).encode("utf-8")})
        except Exception as exc:  # noqa: BLE001 - a record that cannot be kept must not fail the write itself
            log.warning("could not keep the record of job %s: %s", job.id, type(exc).__name__)

    def load(self, job_id: str) -> dict[str, Any] | None:
        raw = self._kb.state.cache(JOBS_CACHE).get_many([job_id]).get(job_id)
        return json.loads(raw) if raw is not None else None

    def interrupted(self, record: dict[str, Any]) -> dict[str, Any]:
        """A job recorded as running that this server does not run: the server that ran it stopped mid-job."""
        self._kb._reload_if_changed()
        states = {d: (self._kb.documents[d].state if d in self._kb.documents else "absent") for d in record.get("documents", [])}
        return {
            **record, "status": "interrupted", "document_states": states,
            "error": {"code": "ServerStopped", "message": (
                "The server stopped before this job finished. What it committed stays; documents it had not finished "
                "are pending, and the next build (or the same request again) resumes them."
            )},
        }


class JobRunner:
    def __init__(self, secrets: list | None = None, records: JobRecords | None = None):
        self._write_lock = asyncio.Lock()
        self._jobs: dict[str, Job] = {}
        self._tasks: set[asyncio.Task] = set()
        self._secrets = list(secrets or [])
        self._records = records
        #: (kind, status) -> jobs finished since the server started (``heta_jobs_finished`` in /metrics)
        self.finished_counts: Counter[tuple[str, str]] = Counter()

    def get(self, job_id: str) -> dict[str, Any]:
        job = self._jobs.get(job_id)
        if job is not None:
            return job.to_dict()
        record = self._records.load(job_id) if self._records is not None else None
        if record is None:
            raise ApiError(404, "UnknownJob", f"No job {job_id!r} on this server or in this knowledge base's job records.")
        return self._records.interrupted(record) if record["status"] == "running" and self._records is not None else record

    def running(self) -> Job | None:
        return next((job for job in self._jobs.values() if job.status == "running"), None)

    def check_idle(self) -> None:
        """Refuse (409 ``WriteInProgress``) while one of this server's writes runs."""
        if self._write_lock.locked():
            running = self.running()
            raise ApiError(
                409, "WriteInProgress",
                f"Another write ({running.kind if running else 'a job'}) is running on this server; "
                f"wait for job {running.id if running else '?'} to finish (GET /api/v1/jobs/ID), then retry.",
                job_id=running.id if running else None,
            )

    async def start(self, kind: str, work: Callable[[Job], Awaitable[Any]], documents: Sequence[str] = ()) -> Job:
        """Start ``work(job)`` in the background, or refuse with 409 when another write runs."""
        self.check_idle()
        # taken here, not in the task, so a request arriving before the task starts is refused; an unheld
        # asyncio.Lock is acquired without suspending, so nothing can slip in between the check and this
        await self._write_lock.acquire()
        # unique across restarts: the records of earlier servers share the knowledge base
        job = Job(id=uuid.uuid4().hex[:16], kind=kind, documents=list(documents))
        self._jobs[job.id] = job
        if self._records is not None:
            await asyncio.to_thread(self._records.save, job)
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
            self.finished_counts[(job.kind, job.status)] += 1
            if self._records is not None:
                await asyncio.to_thread(self._records.save, job)
            self._write_lock.release()

    def _forget_old(self) -> None:
        finished = [j for j in self._jobs.values() if j.status != "running"]
        for job in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del self._jobs[job.id]

    async def wait_idle(self) -> None:
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
