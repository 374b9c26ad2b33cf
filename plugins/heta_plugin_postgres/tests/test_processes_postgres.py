"""Real processes, one knowledge base on a real server: a KB is a DSN plus a name.

Every process runs in a working folder of its own with a knowledge-base folder of its own
holding nothing but a copy of the recipe; they share only the DSN (in ``HETA_POSTGRES_DSN``)
and the recipe's ``namespace``. The server user has a password, checked by the server
(scram-sha-256), and the test greps everything the processes printed, logged, traced and
left behind for it.

- A builds the first documents with the CLI; B, elsewhere, lists and queries them.
- A builds more while B queries in a loop: no query meets a raw library error, each sees
  only documents that exist, and B sees the new ones once A has committed.
- C tries to build during A's build and is refused, naming A's PID and host.
- D, a third process and folder, adds documents afterwards; everyone sees them.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from heta_framework.builtin.engines.calibration import CACHE_FILE
from heta_framework.kb.starter import starter_recipe_toml
from heta_framework.plugins.registry import PluginRegistry
from heta_plugin_postgres.connection import PostgresOptions
from heta_plugin_postgres.state import PostgresState
from psycopg import sql
from psycopg.conninfo import make_conninfo

pytestmark = pytest.mark.slow
DOCUMENTS = Path(__file__).resolve().parents[3] / "examples" / "documents"
ROLE, DATABASE = "heta_processes", "heta_processes"
MODES = ("vector_search", "full_text_search", "sql_text_search")

# B: load once, then query every mode until told to stop; count what each query met
_QUERY_LOOP = textwrap.dedent(
    """
    import asyncio, json, sys, time
    from pathlib import Path
    from heta_framework.errors import HetaError
    from heta_framework.kb import KnowledgeBase
    kb = KnowledgeBase.load(sys.argv[1])
    stop = Path(sys.argv[2])
    modes = sys.argv[3].split(",")
    counts = {"ok": 0, "during_build": 0, "heta_errors": {}, "raw_errors": [], "documents_seen": [], "empty": 0}
    seen = set()
    print("ready", flush=True)
    async def loop():
        while not stop.exists():
            for mode in modes:
                building = kb.state.writer_active()
                try:
                    response = await kb.query("coral reef penicillin ocean", mode=mode, top_k=5)
                except HetaError as exc:
                    counts["heta_errors"][exc.code] = counts["heta_errors"].get(exc.code, 0) + 1
                    continue
                except Exception as exc:  # what must never happen: a raw library error
                    counts["raw_errors"].append(f"{type(exc).__name__}: {exc}")
                    continue
                counts["ok"] += 1
                counts["during_build"] += building
                counts["empty"] += not response.results
                seen.update(r.document_id for r in response.results)
            await asyncio.sleep(0.05)
    asyncio.run(loop())
    counts["documents_seen"] = sorted(seen)
    counts["documents_listed"] = sorted(kb.documents)
    kb.close()
    print(json.dumps(counts), flush=True)
    """
)

# C: wait until someone builds, then ask the CLI to build too (no --wait: it must be refused at once)
_CONCURRENT_BUILD = textwrap.dedent(
    """
    import sys, time
    from heta_framework.cli.main import cli
    from heta_plugin_postgres.testing import default_state
    from heta_framework.kb import KnowledgeBase
    kb = KnowledgeBase.load(sys.argv[1])
    deadline = time.monotonic() + 300
    while not kb.state.writer_active():
        if time.monotonic() > deadline:
            sys.exit("nobody built")
        time.sleep(0.02)
    kb.close()
    print("saw a writer", flush=True)
    cli(["-v", "--kb", sys.argv[1], "build", sys.argv[2]])
    """
)


@pytest.fixture(scope="module")
def password_dsn(postgres_dsn):
    """A login role with a password the server checks, owning a database of its own (pgvector installed)."""
    password = f"pw-{uuid.uuid4().hex}"
    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(ROLE), sql.Literal(password)))
        admin.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(DATABASE), sql.Identifier(ROLE)))
        hba = Path(admin.execute("SHOW hba_file").fetchone()[0])
    with psycopg.connect(make_conninfo(postgres_dsn, dbname=DATABASE), autocommit=True) as admin:
        admin.execute("CREATE EXTENSION IF NOT EXISTS vector")
    original = hba.read_text()
    hba.write_text(f"local {DATABASE} {ROLE} scram-sha-256\n" + original)  # first match wins: this role must log in
    _reload(postgres_dsn)
    dsn = make_conninfo(postgres_dsn, user=ROLE, password=password, dbname=DATABASE)
    with pytest.raises(psycopg.OperationalError):  # the password is really checked
        psycopg.connect(make_conninfo(dsn, password="wrong")).close()
    try:
        yield dsn, password
    finally:
        hba.write_text(original)
        _reload(postgres_dsn)
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DATABASE)))
            admin.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(ROLE)))


def _reload(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_reload_conf()")
    time.sleep(0.3)  # the postmaster rereads pg_hba.conf on the signal


def _recipe(namespace: str) -> str:
    text = starter_recipe_toml(PluginRegistry.from_entry_points(strict=True), backend="postgres")
    assert '[stores.state]\ntype = "postgres"' in text
    return text.replace('dsn_env = "HETA_POSTGRES_DSN"\n', f'dsn_env = "HETA_POSTGRES_DSN"\nnamespace = "{namespace}"\n')


def _copy_documents(target: Path, *topics: str) -> Path:
    for topic in topics:
        shutil.copytree(DOCUMENTS / topic, target / topic)
    return target


class Machine:
    """Working folders that share nothing but the DSN; every process's output is kept for the password grep."""

    def __init__(self, root: Path, dsn: str, recipe: str):
        self.root = root
        self.env = {**os.environ, "HETA_POSTGRES_DSN": dsn, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        self.env.pop("HETA_KB", None)
        self.recipe = recipe
        self.outputs: list[str] = []

    def workdir(self, name: str) -> Path:
        """A working folder with a knowledge-base folder ``kb`` holding only the recipe."""
        folder = self.root / name
        (folder / "kb").mkdir(parents=True, exist_ok=True)
        (folder / "kb" / "recipe.toml").write_text(self.recipe)
        return folder

    def heta(self, cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([sys.executable, "-m", "heta_framework.cli.main", "-v", "--kb", "kb", *args], cwd=cwd,
                              env=self.env, capture_output=True, text=True, timeout=900)
        self.outputs += [done.stdout, done.stderr]
        if check:
            assert done.returncode == 0, done.stderr[-3000:]
        return done

    def start(self, cwd: Path, *argv: str) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, *argv], cwd=cwd, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def finish(self, process: subprocess.Popen, timeout: float = 900) -> tuple[int, str, str]:
        out, err = process.communicate(timeout=timeout)
        self.outputs += [out, err]
        return process.returncode, out, err


def _rows(machine: Machine, cwd: Path) -> list[dict]:
    return json.loads(machine.heta(cwd, "documents", "--json").stdout)["documents"]


def _listed(machine: Machine, cwd: Path) -> set[str]:
    return {row["id"] for row in _rows(machine, cwd)}


def test_processes_in_different_folders_share_one_knowledge_base(password_dsn, tmp_path, monkeypatch):
    dsn, password = password_dsn
    namespace = f"shared_{uuid.uuid4().hex[:8]}"
    machine = Machine(tmp_path, dsn, _recipe(namespace))
    a, b, c, d = (machine.workdir(name) for name in ("a", "b", "c", "d"))
    first = _copy_documents(a / "first", "ocean", "space")
    second = _copy_documents(a / "second", "computing", "life")
    third = d / "third"
    third.mkdir()
    (third / "axolotl.txt").write_text("The axolotl regrows lost limbs, and even parts of its heart and brain.")
    (third / "tardigrade.txt").write_text("Tardigrades survive boiling, freezing and the vacuum of space.")

    # A builds; B, in another folder, lists and queries what A built
    machine.heta(a, "build", "first")
    first_ids = _listed(machine, b)
    assert len(first_ids) == sum(1 for _ in first.rglob("*") if _.is_file())
    answered = json.loads(machine.heta(b, "query", "coral reef", "-m", "full_text_search", "--trace", "--json").stdout)
    assert answered["results"] and {r["metadata"]["document_id"] for r in answered["results"]} <= first_ids

    # A builds more while B queries in a loop and C tries to build too
    stop = tmp_path / "stop"
    reader = machine.start(b, "-c", _QUERY_LOOP, "kb", str(stop), ",".join(MODES))
    assert reader.stdout is not None and reader.stdout.readline().strip() == "ready"
    rival = machine.start(c, "-c", _CONCURRENT_BUILD, "kb", str(_copy_documents(c / "rival", "life")))
    builder = machine.start(a, "-m", "heta_framework.cli.main", "-v", "--kb", "kb", "build", "second")
    rival_code, rival_out, rival_err = machine.finish(rival)
    builder_code, _, builder_err = machine.finish(builder)
    assert builder_code == 0, builder_err[-3000:]
    time.sleep(1.0)  # B's loop goes on a moment after the commit: it must see the new documents
    stop.touch()
    reader_code, reader_out, reader_err = machine.finish(reader)
    assert reader_code == 0, reader_err[-3000:]

    assert "saw a writer" in rival_out and rival_code != 0
    assert f"being built by PID {builder.pid} on {socket.gethostname()} since " in rival_err, rival_err[-2000:]
    assert "Traceback" not in rival_err and "--wait" in rival_err

    counts = json.loads(reader_out.strip().splitlines()[-1])
    all_ids = _listed(machine, b)
    second_ids = all_ids - first_ids
    assert second_ids and len(all_ids) == len(first_ids) + sum(1 for _ in second.rglob("*") if _.is_file())
    assert counts["raw_errors"] == [], counts["raw_errors"][:5]  # never a raw library error
    assert counts["during_build"] > 0 and counts["ok"] > counts["during_build"]
    assert set(counts["heta_errors"]) <= {"knowledge_base_busy"}, counts["heta_errors"]
    assert set(counts["documents_seen"]) <= all_ids  # only documents that exist
    assert set(counts["documents_listed"]) == all_ids  # B reloaded A's commit without reopening
    print(f"\nqueries from B: {counts['ok']} answered ({counts['during_build']} during A's build), "
          f"{sum(counts['heta_errors'].values())} busy, {len(counts['raw_errors'])} raw errors")

    # D, a third process in a third folder, adds documents; B sees them and finds one
    machine.heta(d, "build", "third")
    added = {Path(row["source"]).name for row in _rows(machine, b) if row["id"] not in all_ids}
    assert added == {"axolotl.txt", "tardigrade.txt"}, added
    found = json.loads(machine.heta(b, "query", "regrows lost limbs", "-m", "sql_text_search", "--json").stdout)
    assert Path(found["results"][0]["metadata"]["source"]).name == "axolotl.txt"

    # nothing that matters is on local disk: each KB folder still holds only its recipe, and where a build
    # calibrated the fused modes, that calibration (a cache of the shared state, made again when missing)
    for workdir in (a, b, c, d):
        assert sorted(p.name for p in (workdir / "kb").iterdir()) in (["recipe.toml"], [CACHE_FILE, "recipe.toml"])

    # the password: not in any output, log, trace, error, file, or the state on the server
    monkeypatch.setenv("HETA_POSTGRES_DSN", dsn)
    state = PostgresState.open(PostgresOptions(namespace=namespace), a / "kb")
    record = json.dumps(state.read_run_record())
    assert '"runs"' in record
    left_behind = [p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file()]
    with psycopg.connect(dsn) as conn:
        stored = [row[0] for row in conn.execute(
            sql.SQL("SELECT body FROM {}.state_documents").format(sql.Identifier(namespace))).fetchall()]
    everything = "\n".join([*machine.outputs, record, *left_behind, *stored, repr(state), state.location])
    assert "INFO" in everything and "being built by PID" in everything  # the logs and the refusal are in it
    assert password not in everything
    assert dsn not in everything
