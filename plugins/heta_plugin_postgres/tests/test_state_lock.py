"""The postgres writer lock beyond the suite: its message, a killed holder's leftover row, waiting, the KB's use of it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from heta_framework.errors import KnowledgeBaseLockedError
from heta_plugin_postgres.connection import namespace_for
from heta_plugin_postgres.state import PostgresState
from heta_plugin_postgres.testing import drop_schema

_HOLD = textwrap.dedent(
    """
    import sys, time
    from heta_plugin_postgres.testing import default_state
    lock = default_state(sys.argv[1]).writer_lock("built")
    lock.acquire()
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
    lock.release()
    print("released", flush=True)
    time.sleep(600)
    """
)


@pytest.fixture
def kb_root(tmp_path, postgres_namespace):
    return tmp_path / postgres_namespace


@pytest.fixture
def state(postgres_env, kb_root):
    yield PostgresState.open(None, kb_root)
    drop_schema(postgres_env, namespace_for(kb_root))


def _hold(kb_root, seconds: float) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", _HOLD, str(kb_root), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_the_refusal_names_pid_host_time_and_never_the_password(state, kb_root, postgres_env):
    child = _hold(kb_root, 600)
    try:
        with pytest.raises(KnowledgeBaseLockedError) as refused:
            state.writer_lock("built").acquire()
        message = str(refused.value)
        assert f"being built by PID {child.pid} on {socket.gethostname()} since " in message
        assert time.strftime("%Y-%m-%d", time.gmtime()) in message and "UTC" in message
        assert refused.value.code == "knowledge_base_locked"
        assert refused.value.holder["pid"] == child.pid
        assert postgres_env not in message and "--wait" in message
    finally:
        child.kill()
        child.wait()


def test_wait_polls_until_the_holder_releases(state, kb_root):
    child = _hold(kb_root, 1.0)
    try:
        started = time.monotonic()
        with state.writer_lock("built").acquire(wait=30) as lock:
            assert lock.held and lock.holder()["pid"] == os.getpid()
        assert 0.3 < time.monotonic() - started < 30
        assert lock.stale_holder is None  # released properly: no leftover row
    finally:
        child.kill()
        child.wait()


def test_a_killed_holder_leaves_its_row_and_the_next_writer_reports_it(state, kb_root):
    child = _hold(kb_root, 600)
    assert state.writer_active()
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    deadline = time.monotonic() + 10
    while state.writer_active():  # the server ends the session when it sees the socket closed
        assert time.monotonic() < deadline, "the killed holder's session kept the advisory lock"
        time.sleep(0.05)
    with state.writer_lock("built") as lock:
        assert lock.stale_holder is not None and lock.stale_holder["pid"] == child.pid
    assert lock.holder() == {} and not state.writer_active()


def test_acquire_async_waits_without_blocking_the_loop(state, kb_root):
    import asyncio

    child = _hold(kb_root, 1.0)

    async def main() -> tuple[int, bool]:
        ticks = 0
        stop = threading.Event()

        async def tick() -> None:
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.create_task(tick())
        lock = await state.writer_lock("built").acquire_async(wait=30)
        stop.set()
        await ticker
        held = lock.held
        lock.release()
        return ticks, held

    try:
        ticks, held = asyncio.run(main())
        assert held and ticks > 20  # the loop ran while the lock was waited for
    finally:
        child.kill()
        child.wait()
