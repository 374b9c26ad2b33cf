"""Usage in the CLI: ``heta build --json`` and ``heta eval`` show model calls, tokens and cost (issue #42).

The embedding model is the real openai client against a scripted server on 127.0.0.1 that reports one
token per word; the recipe prices it at 0.02 per million tokens.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from heta_framework.cli.main import cli
from heta_framework.testing.http import RecordedRequest, ScriptedServer, embeddings_body

DOCUMENTS = Path(__file__).resolve().parents[1] / "examples" / "documents"
EVAL_SET = Path(__file__).resolve().parents[1] / "core" / "tests" / "data" / "eval" / "queries.jsonl"
KEY = "sk-usage-cli-0123456789"
RECIPE = """
[models.embedding]
model_name = "openai/hash-embedding"
base_url = "{base_url}"
api_key_env = "HETA_TEST_EMBEDDING_KEY"
options = {{dimension = 16, max_attempts = 1}}
prices = {{input = 0.02}}

[[steps]]
step = "parse_documents"

[[steps]]
step = "split_documents"

[[steps]]
step = "embed_chunks"

[[steps]]
step = "index_vectors"
"""


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def hashed_embeddings(request: RecordedRequest) -> dict[str, Any]:
    """Each word adds to one of 16 dimensions; the server reports one token per word."""
    vectors = []
    for text in request.json["input"]:
        vector = np.full(16, 0.01, dtype=np.float32)
        for word in _words(text):
            vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % 16] += 1.0
        vectors.append(vector / np.linalg.norm(vector))
    return embeddings_body(vectors, prompt_tokens=sum(len(_words(t)) for t in request.json["input"]))


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def kb(tmp_path, monkeypatch, server: ScriptedServer) -> str:
    monkeypatch.setenv("HETA_TEST_EMBEDDING_KEY", KEY)
    server.respond("embeddings", hashed_embeddings)
    recipe = tmp_path / "recipe.toml"
    recipe.write_text(RECIPE.format(base_url=server.base_url))
    path = str(tmp_path / "kb")
    run("--kb", path, "init", "--recipe", str(recipe))
    return path


def test_build_json_carries_the_runs_usage_by_model_and_step(kb, server: ScriptedServer):
    report = json.loads(run("--kb", kb, "build", str(DOCUMENTS), "--json"))
    embedded = [text for request in server.requests_to("embeddings") for text in request.json["input"]]
    model = report["usage"]["models"]["openai/hash-embedding"]
    assert model["calls"] == len(server.requests_to("embeddings"))
    assert model["texts"] == len(embedded) > 0
    assert model["tokens"] == sum(len(_words(text)) for text in embedded)
    assert model["cost"] == pytest.approx(model["tokens"] * 0.02 / 1e6)
    assert report["usage"]["totals"]["cost"] == model["cost"]
    steps = {step["name"]: step["usage"] for step in report["steps"]}
    assert steps["embed_chunks"]["models"]["openai/hash-embedding"]["texts"] == len(embedded)
    assert steps["split_documents"]["models"] == {}
    assert KEY not in json.dumps(report)
    text = run("--kb", kb, "build", str(DOCUMENTS), "--rebuild")  # the cache answers: the text report says no call was made
    assert "model usage" not in text


def test_eval_shows_usage_totals_in_the_table_and_the_json(kb, tmp_path, server: ScriptedServer):
    run("--kb", kb, "build", str(DOCUMENTS))
    server.requests.clear()
    args = ["--kb", kb, "eval", str(EVAL_SET), "--mode", "vector_search", "--no-chart"]
    table = run(*args, "--out", str(tmp_path / "out"))
    assert "tokens" in table and "cost" in table
    assert "Model usage: 3 call(s) (0 to language models)" in table  # three queries, each embedded once
    report = json.loads(run(*args, "--out", str(tmp_path / "again"), "--json"))
    queries = [text for request in server.requests_to("embeddings") for text in request.json["input"]]
    assert len(queries) == 6  # both runs
    (result,) = report["results"]
    tokens = sum(len(_words(q)) for q in queries[3:])
    assert result["usage"]["totals"]["embedding_tokens"] == report["usage"]["totals"]["embedding_tokens"] == tokens
    assert report["usage"]["totals"]["cost"] == pytest.approx(tokens * 0.02 / 1e6)
