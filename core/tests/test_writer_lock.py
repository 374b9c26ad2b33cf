"""One writer per knowledge base across processes: real subprocesses, real flock, SIGKILL.

Issue 13: two `heta build` processes at once left 100 orphaned documents and a run marked
`superseded` though it succeeded. Now the second writer waits (or fails with the holder's PID),
and a lock left by a killed writer is taken over.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from heta_framework.errors import KnowledgeBaseLockedError
from heta_framework.kb import KnowledgeBase
from heta_framework.kb.lock import LOCK_FILE, WriterLock

BUILD_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from heta_framework.kb import KnowledgeBase
    kb = KnowledgeBase.load(sys.argv[1])
    wait = None if sys.argv[3] == "none" else float(sys.argv[3])
    report = kb.sync.build([sys.argv[2]], wait=wait)
    print(json.dumps({"run_id": report.run_id, "documents": report.document_count}))
    kb.close()
    """
)

HOLD_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from heta_framework.kb.lock import WriterLock
    WriterLock(sys.argv[1], "built").acquire()
    print("locked", flush=True)
    time.sleep(600)
    """
)


def _python(*args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen([sys.executable, "-c", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kwargs)


def _write_documents(folder: Path, count: int, topic: str) -> Path:
    folder.mkdir(parents=True)
    for index in range(count):
        (folder / f"{topic}-{index:04d}.txt").write_text(
            f"Document {index} about {topic}. " + " ".join(f"{topic}{index}word{w}" for w in range(60)) + "."
        )
    return folder


def _sqlite_document_ids(kb_path: Path) -> set[str]:
    with sqlite3.connect(kb_path / "chunks.sqlite") as connection:
        return {row[0] for row in connection.execute("SELECT DISTINCT document_id FROM chunks")}


@pytest.fixture
def kb_path(sql_kb) -> Path:
    path = sql_kb.path
    sql_kb.close()
    return path


def test_two_builds_at_once_both_finish_and_the_stores_agree(kb_path, tmp_path):
    first = _write_documents(tmp_path / "alpha", 150, "alpha")
    second = _write_documents(tmp_path / "beta", 150, "beta")
    runs = [_python(BUILD_SCRIPT, str(kb_path), str(folder), "120") for folder in (first, second)]
    outputs = [process.communicate(timeout=300) for process in runs]
    for process, (_out, err) in zip(runs, outputs):
        assert process.returncode == 0, err
    kb = KnowledgeBase.load(kb_path)
    catalog = set(kb.documents)
    assert len(catalog) == 300
    # every catalogued document has chunks and no chunk belongs to an unknown document
    assert _sqlite_document_ids(kb_path) == catalog
    statuses = [run["status"] for run in kb.run_record.runs]
    assert statuses == ["done", "done"], statuses  # neither run was "superseded"
    assert all(record.state == "built" for record in kb.documents.values())
    kb.close()


def test_a_second_writer_gets_the_holders_pid_or_waits(kb_path, docs_dir):
    holder = _python(HOLD_SCRIPT, str(kb_path))
    try:
        assert holder.stdout.readline().strip() == "locked"
        kb = KnowledgeBase.load(kb_path)
        with pytest.raises(KnowledgeBaseLockedError, match=rf"being built by PID {holder.pid} since .*wait=SECONDS") as caught:
            kb.sync.build([docs_dir])
        assert caught.value.holder["pid"] == holder.pid
        with pytest.raises(KnowledgeBaseLockedError, match=r"waited 0.3 s"):
            kb.sync.build([docs_dir], wait=0.3)
        with pytest.raises(KnowledgeBaseLockedError):
            kb.delete()
        # nothing was written while the lock was refused
        assert kb.documents == {} and not (kb_path / "catalog.json").exists()
        # a waiting writer goes ahead as soon as the holder ends
        started = time.monotonic()
        subprocess.Popen(["sh", "-c", f"sleep 1; kill {holder.pid}"])
        report = kb.sync.build([docs_dir], wait=60)
        assert report.document_count == 3
        assert time.monotonic() - started >= 0.9
        kb.close()
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_left_by_a_killed_holder_is_taken_over(kb_path, docs_dir, caplog):
    holder = _python(HOLD_SCRIPT, str(kb_path))
    assert holder.stdout.readline().strip() == "locked"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    # the record is still there: a killed process cannot clean up
    assert json.loads((kb_path / LOCK_FILE).read_text())["pid"] == holder.pid
    kb = KnowledgeBase.load(kb_path)
    with caplog.at_level("WARNING", logger="heta_framework.common.writer_lock"):
        report = kb.sync.build([docs_dir])  # no wait needed: the kernel released the flock
    assert report.document_count == 3
    stale = [i for i in report.issues if i.code == "stale_writer_lock"]
    assert len(stale) == 1 and str(holder.pid) in stale[0].message
    # the log says what happened, and nothing untrue (no child of the killed writer holds anything)
    [took_over] = [r.getMessage() for r in caplog.records if "took over the writer lock" in r.getMessage()]
    assert f"PID {holder.pid}" in took_over and "child process" not in took_over
    # released properly this time: the next writer finds no record
    assert (kb_path / LOCK_FILE).read_text() == ""
    kb.close()


def test_sigkill_during_a_real_build_then_build_again(kb_path, tmp_path):
    folder = _write_documents(tmp_path / "many", 1500, "gamma")
    build = _python(BUILD_SCRIPT, str(kb_path), str(folder), "none")
    lock_file = kb_path / LOCK_FILE
    deadline = time.monotonic() + 60
    while not (lock_file.exists() and lock_file.read_text().strip()):
        assert time.monotonic() < deadline and build.poll() is None, build.stderr.read() if build.poll() is not None else "no lock"
        time.sleep(0.02)
    time.sleep(0.5)  # let it get into the walk or a step
    os.kill(build.pid, signal.SIGKILL)
    build.wait()
    kb = KnowledgeBase.load(kb_path)
    report = kb.sync.build([folder])
    assert any(i.code == "stale_writer_lock" for i in report.issues)
    assert len(kb.documents) == 1500
    assert _sqlite_document_ids(kb_path) == set(kb.documents)
    assert kb.run_record.last_run["status"] == "done"
    kb.close()


def test_two_objects_in_one_process_also_exclude_each_other(kb_path):
    with WriterLock(kb_path, "built").acquire():
        with pytest.raises(KnowledgeBaseLockedError, match=f"PID {os.getpid()}"):
            WriterLock(kb_path, "built").acquire()
    with WriterLock(kb_path, "built").acquire() as again:  # released on exit
        assert again.held and again.stale_holder is None


async def test_a_store_broken_under_a_reader_while_a_writer_runs_is_a_retryable_error(sql_kb, docs_dir):
    from heta_framework.errors import KnowledgeBaseBusyError

    await sql_kb.build([docs_dir])
    assert (await sql_kb.query("whales", mode="sql_text_search")).results
    database = sql_kb.path / "chunks.sqlite"
    sql_kb.close()  # the last connection checkpoints the WAL: the file alone holds everything
    good = database.read_bytes()
    holder = _python(HOLD_SCRIPT, str(sql_kb.path))
    try:
        assert holder.stdout.readline().strip() == "locked"
        # what a reader can meet mid-write: a store file that is not (yet) a valid database
        sql_kb.close()
        database.write_bytes(b"half written " * 512)
        with pytest.raises(KnowledgeBaseBusyError, match="being written by another process") as raised:
            await sql_kb.query("whales", mode="sql_text_search")
        assert raised.value.retryable and raised.value.code == "knowledge_base_busy"
        assert raised.value.__cause__ is not None  # the library error is kept for debugging, not shown raw
    finally:
        holder.kill()
        holder.wait()
    database.write_bytes(good)
    sql_kb.close()
    # the writer is gone and the file is whole again: the same object answers
    assert (await sql_kb.query("whales", mode="sql_text_search")).results
    # without a writer, a broken store is a real problem and its own error surfaces
    database.write_bytes(b"corrupt " * 512)
    sql_kb.close()
    with pytest.raises(Exception) as raised:
        await sql_kb.query("whales", mode="sql_text_search")
    assert not isinstance(raised.value, KnowledgeBaseBusyError)
