"""The `heta` command line, driven through click's runner against real folders."""

from __future__ import annotations

import json

from click.testing import CliRunner
from heta_framework.cli.main import cli


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_init_build_modes_query_delete(tmp_path, docs_dir):
    kb = str(tmp_path / "kb")
    run("--kb", kb, "init")
    recipe = (tmp_path / "kb" / "recipe.toml").read_text()
    assert 'step = "parse_documents"' in recipe
    output = run("--kb", kb, "build", str(docs_dir))
    assert "Build run 1: 3 document(s)" in output
    assert "sql_text_search" in run("--kb", kb, "modes")
    data = json.loads(run("--kb", kb, "query", "whales", "--mode", "sql_text_search", "--json", "--trace"))
    assert data["results"][0]["metadata"]["name"] == "whales.md"
    assert data["trace"]["mode"] == "sql_text_search"
    filtered = json.loads(run("--kb", kb, "query", "whales fox", "--mode", "sql_text_search", "--filter", "name=fox.txt", "--json"))
    assert [r["metadata"]["name"] for r in filtered["results"]] == ["fox.txt"]
    assert "Would remove chunks.sqlite" in run("--kb", kb, "delete", "--dry-run")
    assert (tmp_path / "kb" / "chunks.sqlite").exists()
    assert "Removed chunks.sqlite" in run("--kb", kb, "delete")
    assert not (tmp_path / "kb" / "chunks.sqlite").exists()


def test_plugins_lists_the_builtin_plugin():
    output = run("plugins")
    assert "heta-core" in output and "parse_documents" in output


def test_errors_are_short_and_say_what_to_do(tmp_path):
    result = CliRunner().invoke(cli, ["--kb", str(tmp_path / "missing"), "modes"])
    assert result.exit_code != 0
    assert "heta init" in str(result.exception)


async def test_heta_modes_says_why_rewrite_and_multihop_are_unavailable(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    result = CliRunner(env={"COLUMNS": "400"}).invoke(cli, ["--kb", str(sql_kb.path), "modes"])
    assert result.exit_code == 0, result.output
    for mode in ("heta_rewrite_search", "heta_multihop_search"):
        line = next(line for line in result.output.splitlines() if mode in line)
        assert "unavailable" in line
        assert "component models.language is not in the recipe" in line
        assert "asset chunk_vector_index is not built" in line
