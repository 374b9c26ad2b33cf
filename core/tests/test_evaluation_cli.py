"""``heta eval`` end to end on the demo documents: table, JSON, chart.png, self-evaluation, resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from heta_framework.cli.main import cli

DATA = Path(__file__).parent / "data" / "eval"
DOCUMENTS = Path(__file__).resolve().parents[2] / "examples" / "documents"

SQL_RECIPE = """
[[steps]]
step = "parse_documents"

[[steps]]
step = "split_documents"
chunk_size = {chunk_size}
chunk_overlap = 20

[[steps]]
step = "persist_chunks"
"""


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def recipes(tmp_path: Path) -> list[str]:
    paths = []
    for name, size in (("sql", 200), ("sql-small", 60)):
        path = tmp_path / f"{name}.toml"
        path.write_text(SQL_RECIPE.format(chunk_size=size))
        paths.append(str(path))
    return paths


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_eval_two_recipes_on_the_demo_documents(tmp_path: Path, recipes: list[str]):
    out = tmp_path / "out"
    args = ["eval", str(DATA / "queries.jsonl"), "--documents", str(DOCUMENTS), "--out", str(out), "-k", "5", "--mode", "sql_text_search"]
    for recipe in recipes:
        args += ["--recipe", recipe]
    text = run(*args)
    assert "queries, k=5" in text  # the title names the set
    for column in ("ndcg@5", "map@5", "mrr@5", "recall@5", "precision@5", "evidence_recall@5", "p50 ms", "p95 ms"):
        assert column in text
    assert "sql-small" in text and "sql_text_search" in text

    summary = json.loads((out / "summary.json").read_text())
    assert [(r["recipe"], r["mode"], r["queries"]) for r in summary["results"]] == [("sql", "sql_text_search", 3), ("sql-small", "sql_text_search", 3)]
    for result in summary["results"]:
        # the whale and Turing questions name their article; both recipes find each in the top 5
        assert result["metrics"]["recall@5"] == 1.0
        assert result["metrics"]["evidence_recall@5"] == 1.0  # "placental marine mammals", "gravitational forces ..."
        assert 0 < result["p50_ms"] <= result["p95_ms"]
    assert summary["unmatched_gold"] == {}

    # every result line names its query and keeps its ranking; the whale query's MRR is where whale.md ranks in it
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 6
    catalog = json.loads((out / "kb-sql" / "catalog.json").read_text())
    whale = next(r for r in rows if r["recipe"] == "sql" and r["query_id"] == "whale")
    names = [catalog[document_id]["name"] for document_id in whale["ranking"]]
    assert whale["metrics"]["mrr@5"] == 1 / (names.index("whale.md") + 1)

    width, height = png_size(out / "chart.png")
    assert (width, height) == (960, 660)
    assert (out / "chart.png").stat().st_size > 10_000

    # again with --json: nothing is measured twice, the knowledge bases are reused
    again = json.loads(run(*args, "--json"))
    assert again["resumed"] == 6
    assert again["results"] == summary["results"]
    assert len((out / "results.jsonl").read_text().splitlines()) == 6


def test_eval_self_on_an_existing_knowledge_base(tmp_path: Path, recipes: list[str]):
    kb = str(tmp_path / "kb")
    run("--kb", kb, "init", "--recipe", recipes[0])
    run("--kb", kb, "build", str(DOCUMENTS))
    report = json.loads(run("--kb", kb, "eval", "self", "--queries", "15", "--mode", "sql_text_search", "--out", str(tmp_path / "out"), "--no-chart", "--json"))
    (result,) = report["results"]
    assert (result["recipe"], result["mode"], result["queries"]) == ("kb", "sql_text_search", 15)
    # the fusion calibration's pseudo-queries: some of a chunk's own words find its document most of the time
    assert result["metrics"]["mrr@10"] > 0.5
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    catalog = json.loads((Path(kb) / "catalog.json").read_text())
    assert all(document_id in catalog for row in rows for document_id in row["ranking"])
    assert not (tmp_path / "out" / "chart.png").exists()


def test_eval_mistakes_are_one_line(tmp_path: Path):
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path / "none"), "eval", str(DATA / "queries.jsonl"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2 and "Nothing to evaluate" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(cli, ["eval", str(tmp_path / "set.csv")])
    assert result.exit_code == 2 and "Cannot tell the format" in result.output


def test_eval_refuses_to_mix_results_of_another_set(tmp_path: Path, recipes: list[str]):
    out = str(tmp_path / "out")
    base = ["--documents", str(DOCUMENTS), "--recipe", recipes[0], "--mode", "sql_text_search", "--out", out, "--no-chart", "--json"]
    run("eval", str(DATA / "queries.jsonl"), *base)
    other = tmp_path / "other.jsonl"
    other.write_text('{"query": "octopus", "documents": ["octopus.md"]}\n')
    result = CliRunner().invoke(cli, ["eval", str(other), *base])
    assert result.exit_code == 2 and "holds results of another evaluation" in result.output
    report = json.loads(run("eval", str(other), *base, "--fresh"))
    assert report["results"][0]["queries"] == 1 and report["resumed"] == 0


def test_a_killed_eval_resumes_without_redoing_finished_queries(tmp_path: Path, recipes: list[str]):
    words = ["whale", "ocean", "tide", "coral", "shark", "plankton", "turing", "computer", "planet", "moon", "cell", "dolphin"]
    total = 6000
    dataset = tmp_path / "many.jsonl"
    dataset.write_text("".join(
        json.dumps({"id": f"q{i}", "query": f"{words[i % len(words)]} {words[(i * 7) % len(words)]}", "documents": ["whale.md"]}) + "\n"
        for i in range(total)
    ))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "heta_framework.cli.main", "eval", str(dataset), "--recipe", recipes[0], "--documents", str(DOCUMENTS),
               "--mode", "sql_text_search", "--out", str(out), "--no-chart", "--json"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if results.exists() and results.stat().st_size > 200 * 100:  # a few hundred results written
                break
            time.sleep(0.02)
        assert process.poll() is None, f"the eval ended before it could be killed: {process.stderr.read().decode()[-2000:]}"
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    finished = []
    for line in results.read_text().splitlines():
        try:
            finished.append(json.loads(line)["query_id"])
        except json.JSONDecodeError:
            pass  # the line being written when the process died
    assert 0 < len(finished) < total, len(finished)

    rerun = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    report = json.loads(rerun.stdout)
    assert report["resumed"] == len(finished)
    assert report["results"][0]["queries"] == total
    keys = [json.loads(line)["query_id"] for line in results.read_text().splitlines() if line.strip().endswith("}")]
    # every query exactly once: those finished before the kill were kept, not run again
    assert sorted(keys) == sorted(f"q{i}" for i in range(total))
