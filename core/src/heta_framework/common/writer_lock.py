"""The writer lock: one build, remove or delete per knowledge base at a time, across processes.

The lock is an OS lock (``flock``) on ``<kb>/writer.lock``. The kernel drops it when
the holding process dies, however it dies (SIGKILL included), so a lock left by a
killed writer can never block the next one. The file also holds a record of the
holder (pid, host, start time, operation) for the error message only: it is never
trusted to decide who holds the lock, because a killed writer leaves it behind.
When a writer takes the lock and finds a record, the previous holder died without
releasing it; ``WriterLock.stale_holder`` keeps that record so the caller can say so.
"""

from __future__ import annotations

import asyncio
import datetime
import fcntl
import json
import logging
import os
import socket
import time
from pathlib import Path
from typing import Any, Self

from heta_framework.errors import KnowledgeBaseLockedError

log = logging.getLogger(__name__)

LOCK_FILE = "writer.lock"
#: how often a waiting writer tries the lock again
POLL_SECONDS = 0.1
#: even without ``wait``, a writer tries this long: a reader's probe (``another_writer_holds``)
#: holds a shared lock for microseconds and must not make a writer fail
MIN_WAIT_SECONDS = 0.25
#: knowledge-base folders whose writer lock this process holds (resolved path -> how many holders)
_HELD: dict[str, int] = {}


def holds_writer_lock(kb_path: Path | str) -> bool:
    """Whether this process is the writer of ``kb_path`` right now.

    Stores ask before repairing what a crash left half written (a vector without its metadata
    row, say): in a reader that state may be another process's write in progress, not damage.
    """
    return _HELD.get(os.path.realpath(kb_path), 0) > 0


def another_writer_holds(kb_path: Path | str) -> bool:
    """Whether a writer holds ``kb_path``'s lock right now: another process, or another lock object
    of this one (a flock probe, so a killed writer's leftover record does not count)."""
    try:
        fd = os.open(Path(kb_path) / LOCK_FILE, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def may_change_stores(kb_path: Path | str) -> bool:
    """Whether this process may write store files of ``kb_path`` outside a step (repairs at open,
    flush on close): it is the writer, or no writer is running anywhere."""
    return holds_writer_lock(kb_path) or not another_writer_holds(kb_path)


def _describe(holder: dict[str, Any], *, still_held: bool = True) -> str:
    """``holder`` for a message. ``still_held``: someone holds the lock now (a refusal), so a dead holder PID
    means a child of it kept the descriptor; after a takeover nobody else holds it and no such clause is true."""
    if not holder:
        return "another process (it left no record)"
    since = datetime.datetime.fromtimestamp(holder.get("started", 0), tz=datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    where = "" if holder.get("host") == socket.gethostname() else f" on host {holder.get('host')}"
    what = holder.get("operation", "written")
    alive = ""
    if still_held and holder.get("host") == socket.gethostname() and not _pid_alive(int(holder.get("pid", 0))):
        # the lock is still held (flock says so): a child that inherited the descriptor outlived it
        alive = " (that process has exited; a child process it started still holds the lock)"
    return f"{what} by PID {holder.get('pid')}{where} since {since}{alive}"


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PollingWriterLock:
    """What every writer lock shares: acquire by polling ``_try`` until ``wait`` runs out, the error
    naming the holder, and the context-manager forms. A backend says how to try, release and read
    its holder (``WriterLock`` below: a file; a server's state: its own lock)."""

    #: run each try in a thread from ``acquire_async`` (a try that talks to a server blocks)
    try_in_thread = False

    @property
    def held(self) -> bool:
        raise NotImplementedError

    @property
    def location(self) -> str:
        """Where the knowledge base is, for messages."""
        raise NotImplementedError

    def _try(self) -> bool:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError

    def holder(self) -> dict[str, Any]:
        raise NotImplementedError

    def describe_holder(self, holder: dict[str, Any]) -> str:
        """``built by PID 123 since ...``: what the lock error says about the holder."""
        return _describe(holder)

    def _locked_error(self, wait: float | None) -> KnowledgeBaseLockedError:
        holder = self.holder()
        waited = f" (waited {wait:g} s)" if wait else ""
        return KnowledgeBaseLockedError(
            f"The knowledge base {self.location} is being {self.describe_holder(holder)}{waited}. "
            "Wait for it to finish, or pass wait=SECONDS (CLI: --wait SECONDS) to wait for the lock.",
            holder,
        )

    def acquire(self, wait: float | None = None) -> Self:
        deadline = time.monotonic() + max(wait or 0, MIN_WAIT_SECONDS)
        while not self._try():
            if time.monotonic() >= deadline:
                raise self._locked_error(wait)
            time.sleep(POLL_SECONDS)
        return self

    async def acquire_async(self, wait: float | None = None) -> Self:
        """As ``acquire``, but waits without blocking the event loop."""
        deadline = time.monotonic() + max(wait or 0, MIN_WAIT_SECONDS)
        while not (await asyncio.to_thread(self._try) if self.try_in_thread else self._try()):
            if time.monotonic() >= deadline:
                raise self._locked_error(wait)
            await asyncio.sleep(POLL_SECONDS)
        return self

    def __enter__(self) -> Self:
        if not self.held:
            self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    async def __aenter__(self) -> Self:
        if not self.held:
            await self.acquire_async()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.release()


class WriterLock(PollingWriterLock):
    """``with WriterLock(kb_path, "build").acquire(wait=...)`` or ``await lock.acquire_async(wait=...)``.

    ``wait=None`` (or 0) fails at once with ``KnowledgeBaseLockedError`` when another writer holds
    the lock; ``wait=seconds`` tries again until then; ``wait=float("inf")`` waits as long as it takes.
    """

    def __init__(self, kb_path: Path, operation: str):
        self.path = Path(kb_path) / LOCK_FILE
        self.operation = operation
        self.stale_holder: dict[str, Any] | None = None
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def _try(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self._fd = fd
        key = os.path.realpath(self.path.parent)
        _HELD[key] = _HELD.get(key, 0) + 1
        previous = _read_record(fd)
        if previous:
            # we hold the flock, so whoever wrote this record is gone without releasing it
            self.stale_holder = previous
            log.warning("took over the writer lock of %s: the writer %s ended without releasing it", self.path.parent,
                        _describe(previous, still_held=False))
        record = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time(), "operation": self.operation}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(record).encode("utf-8"), 0)
        os.fsync(fd)
        return True

    @property
    def location(self) -> str:
        return f"at {self.path.parent}"

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        key = os.path.realpath(self.path.parent)
        _HELD[key] = _HELD.get(key, 1) - 1
        if _HELD[key] <= 0:
            del _HELD[key]
        try:
            os.ftruncate(fd, 0)  # an empty record means "released properly"
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def holder(self) -> dict[str, Any]:
        """What the lock file says about its holder (may be stale: see the module docstring)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return {}
        try:
            return _read_record(fd)
        finally:
            os.close(fd)


def _read_record(fd: int) -> dict[str, Any]:
    raw = os.pread(fd, 4096, 0)
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"pid": 0, "host": "?", "started": 0, "operation": "written (unreadable lock record)"}
    return value if isinstance(value, dict) else {}


def writer_active(kb_path: Path) -> bool:
    """Whether another writer is running now (for a reader deciding whether an error is retryable)."""
    return another_writer_holds(kb_path)
