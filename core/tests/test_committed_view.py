"""A build in progress never shows half its documents: queries read the last committed build.

Issue 13: each store commits as its step finishes, so a reader in another process saw new
documents in one store and not the others. Now the documents an unfinished run is adding are held
back (with an issue saying so) until the run is done; a crash leaves the knowledge base as it was.
A real writer subprocess is paused after it persisted the new chunks (its own PersistChunks, run
to completion, then waiting on a file), and this process queries the same folder.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from heta_framework.kb import KnowledgeBase
from heta_framework.kb.committed_view import HIDDEN_CODE, documents_being_built, hide_documents
from heta_framework.kb.search import QueryResponse, QueryResult

PAUSED_WRITER = textwrap.dedent(
    """
    import asyncio, pathlib, sys
    from heta_framework.builtin.steps import PersistChunks
    from heta_framework.kb import KnowledgeBase
    persisted, release = pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4])
    original = PersistChunks.run
    async def persist_then_wait(self, context):
        await original(self, context)  # the chunks are committed to the SQLite store here
        persisted.touch()
        while not release.exists():
            await asyncio.sleep(0.02)
    PersistChunks.run = persist_then_wait
    kb = KnowledgeBase.load(sys.argv[1])
    kb.sync.build([sys.argv[2]])
    kb.close()
    print("built", flush=True)
    """
)


def _start_paused_build(kb: KnowledgeBase, folder: Path, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    persisted, release = tmp_path / "persisted", tmp_path / "release"
    writer = subprocess.Popen(
        [sys.executable, "-c", PAUSED_WRITER, str(kb.path), str(folder), str(persisted), str(release)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    deadline = time.monotonic() + 120
    while not persisted.exists():
        assert writer.poll() is None, writer.stderr.read()
        assert time.monotonic() < deadline, "the writer never persisted"
        time.sleep(0.02)
    return writer, release


def _sources(response: QueryResponse) -> set[str]:
    return {Path(r.metadata["source"]).name for r in response.results}


async def test_a_reader_sees_the_last_committed_build_until_the_writer_finishes(sql_kb, docs_dir, tmp_path):
    await sql_kb.build([docs_dir])
    (docs_dir / "otters.txt").write_text("Otters are clever animals that float on their backs in kelp forests.")
    writer, release = _start_paused_build(sql_kb, docs_dir, tmp_path)
    try:
        # the new chunks are in chunks.sqlite, and a raw read of the store shows them...
        with sqlite3.connect(sql_kb.path / "chunks.sqlite") as raw:
            assert raw.execute("SELECT COUNT(*) FROM chunks WHERE text LIKE '%Otters%'").fetchone()[0] == 1
        # ...but the knowledge base answers from its last committed build, and says what it held back
        response = await sql_kb.query("clever animals", mode="sql_text_search", top_k=10)
        assert _sources(response) == {"fox.txt"}
        assert [i["code"] for i in response.issues] == [HIDDEN_CODE]
        assert response.issues[0]["details"] == {"hidden_results": 1}
        # a query that only old documents answer carries no issue
        assert not (await sql_kb.query("whales", mode="sql_text_search")).issues
    finally:
        release.touch()
        out, err = writer.communicate(timeout=120)
    assert "built" in out, err
    response = await sql_kb.query("clever animals", mode="sql_text_search", top_k=10)
    assert _sources(response) == {"fox.txt", "otters.txt"} and not response.issues


async def test_a_writer_killed_mid_build_holds_nothing_back_and_the_next_build_resumes(sql_kb, docs_dir, tmp_path):
    await sql_kb.build([docs_dir])
    (docs_dir / "otters.txt").write_text("Otters are clever animals that float on their backs in kelp forests.")
    writer, _release = _start_paused_build(sql_kb, docs_dir, tmp_path)
    assert [i["code"] for i in (await sql_kb.query("clever animals", mode="sql_text_search")).issues] == [HIDDEN_CODE]
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    # nobody will finish that run until a build resumes it: what it committed is searchable meanwhile
    response = await sql_kb.query("clever animals", mode="sql_text_search", top_k=10)
    assert _sources(response) == {"fox.txt", "otters.txt"} and not response.issues
    report = await sql_kb.build([docs_dir])  # resumes the killed run
    assert report.document_count == 1 and report.resumed
    assert sql_kb.run_record.last_run["status"] == "done"


def test_only_documents_no_finished_run_built_are_held_back():
    runs = [
        {"id": 1, "status": "done", "document_ids": ["a", "b"]},
        {"id": 2, "status": "failed", "document_ids": ["c"]},
        {"id": 3, "status": "running", "document_ids": ["b", "c", "d"]},  # b changed: it was built before
    ]
    assert documents_being_built(runs) == {"c", "d"}
    assert documents_being_built([*runs[:2], {**runs[2], "status": "done"}]) == frozenset()
    assert documents_being_built([]) == frozenset()


def test_graph_facts_lose_the_evidence_of_held_back_documents():
    def chunk(doc: str) -> QueryResult:
        return QueryResult(id=f"{doc}-0", text=doc, score=1.0, metadata={"document_id": doc})

    mixed = QueryResult(id="entity:x", text="x", score=0.9, kind="entity", evidence=(chunk("old"), chunk("new")))
    only_new = QueryResult(id="entity:y", text="y", score=0.8, kind="entity", evidence=(chunk("new"),))
    response = hide_documents(QueryResponse(results=(mixed, chunk("new"), only_new, chunk("old"))), frozenset({"new"}))
    assert [r.id for r in response.results] == ["entity:x", "old-0"]
    assert [e.document_id for e in response.results[0].evidence] == ["old"]
    assert response.issues[0]["details"] == {"hidden_results": 2}
    untouched = QueryResponse(results=(chunk("old"),))
    assert hide_documents(untouched, frozenset({"new"})) is untouched
