"""A build killed part way resumes: finished steps and documents are not redone, nothing is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

STEPS_MODULE = textwrap.dedent(
    '''
    """Test steps that log each run to a file, so the test can count what was redone."""
    import asyncio, os, json
    from typing import ClassVar
    import attrs
    from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepRequirements, store_ref
    from heta_framework.kb.documents import iter_chunks
    from heta_framework.plugins import hookimpl

    LOG = os.environ["RESUME_LOG"]

    def log(event):
        with open(LOG, "a") as handle:
            handle.write(event + "\\n")

    @attrs.frozen
    class CountChunks:
        name: ClassVar[str] = "count_chunks"

        @property
        def requirements(self):
            return StepRequirements(components=frozenset({store_ref("objects")}), artifacts=frozenset({"chunk_keys"}))

        @property
        def capabilities(self):
            return StepCapabilities(artifacts=frozenset({"chunk_count"}))

        async def run(self, context):
            log("count_chunks")
            n = sum(1 for _ in iter_chunks(context.get_component("stores.objects"), context.get_artifact("chunk_keys")))
            context.set_artifact("chunk_count", n)

        def cleanup_plan(self, artifacts):
            return StepCleanupPlan()

    @attrs.frozen
    class SlowStep:
        """Hangs on its first run (until killed); finishes on the next."""
        name: ClassVar[str] = "slow_step"

        @property
        def requirements(self):
            return StepRequirements(artifacts=frozenset({"chunk_count"}))

        @property
        def capabilities(self):
            return StepCapabilities()

        async def run(self, context):
            log("slow_step")
            if os.environ.get("RESUME_HANG") == "1":
                log("hanging")
                await asyncio.sleep(3600)
            context.count("seen_chunks", context.get_artifact("chunk_count"))

        def cleanup_plan(self, artifacts):
            return StepCleanupPlan()

    @hookimpl
    def register_steps(register):
        register(CountChunks)
        register(SlowStep)
    '''
)

BUILD_SCRIPT = textwrap.dedent(
    '''
    import asyncio, sys
    import resume_steps
    from heta_framework.builtin.steps import ParseDocuments, SplitDocuments, PersistChunks
    from heta_framework.kb import KnowledgeBase, Recipe
    from heta_framework.testing import make_registry
    registry = make_registry(resume_steps)
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), resume_steps.CountChunks(), resume_steps.SlowStep()])
    kb = KnowledgeBase.create(sys.argv[1], recipe, registry=registry)
    asyncio.run(kb.build([sys.argv[2]]))
    '''
)


def _wait_for(path: Path, text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never appeared in {path}")


async def test_killed_build_resumes_without_redoing_finished_steps(tmp_path, docs_dir, monkeypatch):
    (tmp_path / "resume_steps.py").write_text(STEPS_MODULE)
    (tmp_path / "build.py").write_text(BUILD_SCRIPT)
    log = tmp_path / "log.txt"
    env = {**os.environ, "RESUME_LOG": str(log), "RESUME_HANG": "1", "PYTHONPATH": str(tmp_path)}
    kb_path = tmp_path / "kb"
    process = subprocess.Popen([sys.executable, str(tmp_path / "build.py"), str(kb_path), str(docs_dir)], env=env)
    try:
        _wait_for(log, "hanging")
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)

    record = json.loads((kb_path / "run_record.json").read_text())
    statuses = {k: v["status"] for k, v in record["runs"][0]["steps"].items()}
    assert statuses == {
        "00-parse_documents": "done",
        "01-split_documents": "done",
        "02-persist_chunks": "done",
        "03-count_chunks": "done",
        "04-slow_step": "running",
    }

    # the half-built knowledge base is readable: sql_text_search already works
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("RESUME_LOG", str(log))
    monkeypatch.setenv("RESUME_HANG", "0")
    import resume_steps
    from heta_framework.kb import KnowledgeBase
    from heta_framework.testing import make_registry

    kb = KnowledgeBase.load(kb_path, registry=make_registry(resume_steps))
    assert kb.available_queries == ["sql_text_search"]
    assert (await kb.query("whales", mode="sql_text_search")).results

    report = await kb.build()
    assert report.resumed
    assert [(s.name, s.status) for s in report.steps] == [
        ("parse_documents", "skipped"),
        ("split_documents", "skipped"),
        ("persist_chunks", "skipped"),
        ("count_chunks", "skipped"),
        ("slow_step", "done"),
    ]
    # the resumed step got the artifact the killed run recorded
    assert report.steps[-1].stats == {"seen_chunks": 3}
    assert log.read_text().splitlines() == ["count_chunks", "slow_step", "hanging", "slow_step"]
    assert all(doc.state == "built" for doc in kb.documents.values())

    # nothing pending: a further build does nothing
    assert (await kb.build()).steps == ()


async def test_new_documents_build_only_themselves(sql_kb, docs_dir, tmp_path):
    first = await sql_kb.build([docs_dir])
    assert first.document_count == 3
    extra = tmp_path / "more"
    extra.mkdir()
    (extra / "new.txt").write_text("Octopuses have three hearts.")
    second = await sql_kb.build([docs_dir, extra])
    assert second.document_count == 1
    assert (await sql_kb.query("octopuses hearts", mode="sql_text_search")).results[0].metadata["name"] == "new.txt"


async def test_changed_document_replaces_its_old_chunks(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    assert (await sql_kb.query("blowhole", mode="sql_text_search")).results
    (docs_dir / "whales.md").write_text("# Whales\n\nWhales sing long songs.")
    report = await sql_kb.build([docs_dir])
    assert report.document_count == 1
    assert not (await sql_kb.query("blowhole", mode="sql_text_search")).results
    assert (await sql_kb.query("songs", mode="sql_text_search")).results


async def test_a_changed_recipe_runs_new_steps_over_existing_documents(tmp_path, registry, docs_dir):
    from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
    from heta_framework.kb import KnowledgeBase, Recipe

    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments()]), registry=registry)
    await kb.build([docs_dir])
    assert kb.available_queries == []
    (tmp_path / "kb" / "recipe.toml").write_text(
        Recipe(steps=[ParseDocuments(), SplitDocuments(), PersistChunks()]).to_toml()
    )
    reopened = KnowledgeBase.load(tmp_path / "kb", registry=registry)
    report = await reopened.build()
    assert report.document_count == 3
    assert report.steps[0].stats == {"already_parsed": 3}
    assert (await reopened.query("whales", mode="sql_text_search")).results
