"""The `heta` command line, driven through click's runner against real folders.

Every command takes --json; user mistakes exit with status 2 and one readable line, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from heta_framework import __version__
from heta_framework.cli.main import cli

SQL_RECIPE = """
[[steps]]
step = "parse_documents"

[[steps]]
step = "split_documents"
chunk_size = 120
chunk_overlap = 20

[[steps]]
step = "persist_chunks"
"""


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def run(*args: str) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.output


def run_json(*args: str):
    return json.loads(run(*args, "--json"))


def fails(*args: str, code: int = 2) -> str:
    """The command exits with ``code`` and prints its message; no traceback escapes."""
    result = invoke(*args)
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result.output


@pytest.fixture
def sql_kb_path(tmp_path, docs_dir) -> str:
    """A knowledge base built from docs_dir with the SQL-only recipe, through the CLI."""
    recipe = tmp_path / "sql.toml"
    recipe.write_text(SQL_RECIPE)
    kb = str(tmp_path / "kb")
    run("--kb", kb, "init", "--recipe", str(recipe))
    run("--kb", kb, "build", str(docs_dir))
    return kb


@pytest.fixture(autouse=True)
def piped(monkeypatch):
    # CliRunner's output is not a terminal; without COLUMNS it must not wrap at 80 columns
    monkeypatch.delenv("COLUMNS", raising=False)


def test_init_build_modes_query_delete_with_the_starter_recipe(tmp_path, docs_dir):
    kb = str(tmp_path / "kb")
    run("--kb", kb, "init")
    recipe = (tmp_path / "kb" / "recipe.toml").read_text()
    assert 'step = "parse_documents"' in recipe
    output = run("--kb", kb, "build", str(docs_dir))
    assert "Build run 1: 3 document(s)" in output
    assert "sql_text_search" in run("--kb", kb, "modes")
    data = run_json("--kb", kb, "query", "whales", "--mode", "sql_text_search", "--trace")
    assert data["results"][0]["metadata"]["name"] == "whales.md"
    assert data["trace"]["mode"] == "sql_text_search"
    filtered = run_json("--kb", kb, "query", "whales fox", "--mode", "sql_text_search", "--filter", "name=fox.txt")
    assert [r["metadata"]["name"] for r in filtered["results"]] == ["fox.txt"]
    assert "Would remove chunks.sqlite" in run("--kb", kb, "delete", "--dry-run")
    assert (tmp_path / "kb" / "chunks.sqlite").exists()
    assert "Removed chunks.sqlite" in run("--kb", kb, "delete")
    assert not (tmp_path / "kb" / "chunks.sqlite").exists()


def test_every_command_prints_json(sql_kb_path, tmp_path, docs_dir):
    plugins = run_json("plugins")
    builtin = next(p for p in plugins["plugins"] if p["name"] == "builtin")
    assert builtin["distribution"] == "heta-core" and "parse_documents" in builtin["registers"]["steps"]

    modes = {row["mode"]: row for row in run_json("--kb", sql_kb_path, "modes")["modes"]}
    assert modes["sql_text_search"]["available"] is True and modes["sql_text_search"]["provided_by"] == "heta-core"
    assert modes["hybrid_search"]["available"] is False and modes["hybrid_search"]["reasons"]

    (docs_dir / "otters.txt").write_text("Sea otters hold hands while they sleep so they do not drift apart.")
    report = run_json("--kb", sql_kb_path, "build", str(docs_dir))
    assert report["document_count"] == 1
    assert [step["name"] for step in report["steps"]] == ["parse_documents", "split_documents", "persist_chunks"]

    listed = run_json("--kb", sql_kb_path, "documents")["documents"]
    assert sorted(Path(d["source"]).name for d in listed) == ["fox.txt", "otters.txt", "shanghai.txt", "whales.md"]
    assert all(d["state"] == "built" and d["chunks"] >= 1 for d in listed)

    otters = next(d for d in listed if d["name"] == "otters.txt")
    shown = run_json("--kb", sql_kb_path, "documents", "show", otters["id"])
    assert shown["chunk_texts"][0]["text"].startswith("Sea otters hold hands")

    dry = run_json("--kb", sql_kb_path, "remove", otters["id"], "--dry-run")
    assert dry == {"dry_run": True, "documents": [{"id": otters["id"], "source": otters["source"]}], "derived": {"split_documents": {"chunks": 1}}}
    plan = run_json("--kb", sql_kb_path, "delete", "--dry-run")
    assert plan["dry_run"] is True and "chunks.sqlite" in plan["paths"] and "recipe.toml" in plan["kept"]
    assert (Path(sql_kb_path) / "chunks.sqlite").exists()


def test_query_json_names_the_mode_that_ran_when_none_was_given(sql_kb_path):
    data = run_json("--kb", sql_kb_path, "query", "whales")
    assert data["metadata"]["mode"] == "sql_text_search"  # the only mode this recipe builds
    assert data["results"][0]["metadata"]["name"] == "whales.md"
    assert "mode sql_text_search" in run("--kb", sql_kb_path, "query", "whales")


def test_remove_by_id_and_by_source_deletes_from_every_store(sql_kb_path, docs_dir):
    listed = {d["name"]: d for d in run_json("--kb", sql_kb_path, "documents")["documents"]}
    assert "Would remove" in run("--kb", sql_kb_path, "remove", "--source", str(docs_dir / "fox.txt"), "--dry-run")
    assert run_json("--kb", sql_kb_path, "query", "fox", "--mode", "sql_text_search")["results"]

    removed = run_json("--kb", sql_kb_path, "remove", "--source", str(docs_dir / "fox.txt"))
    assert [d["id"] for d in removed["documents"]] == [listed["fox.txt"]["id"]]
    run("--kb", sql_kb_path, "remove", listed["whales.md"]["id"])

    remaining = [d["name"] for d in run_json("--kb", sql_kb_path, "documents")["documents"]]
    assert remaining == ["shanghai.txt"]
    before = sorted(p.name for p in Path(sql_kb_path).iterdir())
    compacted = run_json("--kb", sql_kb_path, "compact")
    assert compacted["sqlite_files"] == ["chunks.sqlite"] and compacted["bytes_after"] <= compacted["bytes_before"]
    assert sorted(p.name for p in Path(sql_kb_path).iterdir()) == before  # no store the recipe does not use was created
    results = run_json("--kb", sql_kb_path, "query", "fox whales", "--mode", "sql_text_search")["results"]
    assert results == []


def test_version_names_the_core_and_every_plugin():
    output = run("--version")
    lines = dict(line.split(" ", 1) for line in output.strip().splitlines())
    assert lines["heta-core"] == __version__
    assert all(name.startswith("heta-") for name in lines)


def test_user_mistakes_are_one_line_errors_without_a_traceback(sql_kb_path, tmp_path):
    assert "heta init" in fails("--kb", str(tmp_path / "missing"), "modes")
    assert "not KEY=VALUE" in fails("--kb", sql_kb_path, "query", "fox", "--filter", "name")
    assert "not KEY=VALUE" in fails("--kb", sql_kb_path, "query", "fox", "--option", "=3")
    unknown_mode = fails("--kb", sql_kb_path, "query", "fox", "--mode", "sql_txt_search")
    assert "Unknown query mode 'sql_txt_search'" in unknown_mode and "sql_text_search" in unknown_mode
    assert "--top-k" in fails("--kb", sql_kb_path, "query", "fox", "--top-k", "0")
    assert "Unknown option 'rrf_kk'" in fails("--kb", sql_kb_path, "query", "fox", "--option", "rrf_kk=3")
    assert "rrf_k" in fails("--kb", sql_kb_path, "query", "fox", "--mode", "hybrid_search", "--option", "rrf_k=-1")
    existing = fails("--kb", sql_kb_path, "init")
    assert "already holds a knowledge base" in existing and "build" in existing and "KnowledgeBase.load" not in existing
    assert "No document 'nope'" in fails("--kb", sql_kb_path, "remove", "nope")
    assert "No document 'nope'" in fails("--kb", sql_kb_path, "documents", "show", "nope")


def test_validate_lists_every_problem_and_keeps_bracketed_names(tmp_path, docs_dir):
    good = tmp_path / "good.toml"
    good.write_text(SQL_RECIPE)
    run("--kb", str(tmp_path / "good"), "init", "--recipe", str(good))
    assert "valid" in run("--kb", str(tmp_path / "good"), "validate")
    assert run_json("--kb", str(tmp_path / "good"), "validate") == {"valid": True, "problems": []}

    # steps in the wrong order: each needs what no earlier step provides
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "recipe.toml").write_text(
        '[[steps]]\nstep = "persist_chunks"\n\n[[steps]]\nstep = "split_documents"\n'
    )
    output = fails("--kb", str(folder), "validate", code=1)
    assert "problem(s)" in output and output.count("  - ") >= 2
    result = invoke("--kb", str(folder), "validate", "--json")
    assert result.exit_code == 1
    report = json.loads(result.output)
    assert report["valid"] is False and len(report["problems"]) >= 2
    assert all("parsed_document_keys" in p or "chunk" in p for p in report["problems"])


def test_messages_keep_square_brackets_and_piped_rows_do_not_wrap(tmp_path):
    folder = tmp_path / "needs-embedding"
    folder.mkdir()
    (folder / "recipe.toml").write_text('[[steps]]\nstep = "parse_documents"\n\n[[steps]]\nstep = "split_documents"\n\n[[steps]]\nstep = "embed_chunks"\n')
    result = invoke("--kb", str(folder), "validate")
    if "Unknown step 'embed_chunks'" in result.output:  # heta-core alone: the vector plugin is not installed
        assert "heta-plugin-vector" in result.output
        return
    assert result.exit_code == 1
    assert "[models.embedding]" in result.output  # markup must not swallow it
    line = next(line for line in result.output.splitlines() if "models.embedding" in line)
    assert "which the recipe does not define" in line  # one problem, one line


async def test_heta_modes_says_why_rewrite_and_multihop_are_unavailable(sql_kb, docs_dir):
    await sql_kb.build([docs_dir])
    result = CliRunner().invoke(cli, ["--kb", str(sql_kb.path), "modes"])
    assert result.exit_code == 0, result.output
    for mode in ("heta_rewrite_search", "heta_multihop_search"):
        line = next(line for line in result.output.splitlines() if mode in line)
        assert "unavailable" in line
        assert "component models.language is not in the recipe" in line
        assert "asset chunk_vector_index is not built" in line


async def test_modes_name_the_distribution_to_install(sql_kb, docs_dir):
    """With heta-core alone, first-party modes are listed with the plugin that provides them."""
    from heta_framework.cli.querying import mode_rows

    await sql_kb.build([docs_dir])
    rows = {row["mode"]: row for row in mode_rows(sql_kb)}  # sql_kb's registry holds core's plugin only
    assert rows["vector_search"]["install"] == "pip install heta-plugin-vector"
    assert rows["full_text_search"]["install"] == "pip install heta-plugin-fulltext"
    assert rows["heta_graph_search"]["reasons"] == ["plugin heta-plugin-graph is not installed"]
    hybrid = " ".join(rows["hybrid_search"]["reasons"])
    assert "pip install heta-plugin-vector" in hybrid and "pip install heta-plugin-graph" in hybrid
    assert rows["sql_text_search"]["available"] and rows["sql_text_search"]["install"] is None


def _commands(group, prefix=()):
    import click

    for name, command in group.commands.items():
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


def test_every_command_and_option_is_in_the_cli_reference():
    reference = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = []
    for path, command in _commands(cli):
        if f"heta {' '.join(path)}" not in reference:
            missing.append(" ".join(path))
        for param in command.params:
            missing += [f"{' '.join(path)} {opt}" for opt in param.opts if opt.startswith("-") and f"`{opt}" not in reference
                        and f" {opt}" not in reference and f"[{opt}" not in reference]
    for param in cli.params:
        missing += [opt for opt in param.opts if opt.startswith("-") and f"`{opt}" not in reference]
    assert not missing, f"document these in docs/cli.md: {missing}"


def test_build_prune_removes_documents_whose_file_is_gone(sql_kb_path, docs_dir):
    (docs_dir / "fox.txt").unlink()
    run("--kb", sql_kb_path, "build", str(docs_dir))  # without --prune the document stays
    assert "fox.txt" in [d["name"] for d in run_json("--kb", sql_kb_path, "documents")["documents"]]
    run("--kb", sql_kb_path, "build", str(docs_dir), "--prune")
    assert "fox.txt" not in [d["name"] for d in run_json("--kb", sql_kb_path, "documents")["documents"]]
    assert run_json("--kb", sql_kb_path, "query", "fox", "--mode", "sql_text_search")["results"] == []
    assert "--prune needs the folders" in fails("--kb", sql_kb_path, "build", "--prune")


def test_a_removed_document_stays_removed_unless_its_file_changes_or_force(sql_kb_path, docs_dir):
    run("--kb", sql_kb_path, "remove", "--source", str(docs_dir / "fox.txt"))
    run("--kb", sql_kb_path, "build", str(docs_dir))
    assert "fox.txt" not in [d["name"] for d in run_json("--kb", sql_kb_path, "documents")["documents"]]
    run("--kb", sql_kb_path, "build", str(docs_dir), "--force")
    assert "fox.txt" in [d["name"] for d in run_json("--kb", sql_kb_path, "documents")["documents"]]

    run("--kb", sql_kb_path, "remove", "--source", str(docs_dir / "whales.md"))
    (docs_dir / "whales.md").write_text("# Whales\n\nWhales sing songs that travel across whole oceans.")
    run("--kb", sql_kb_path, "build", str(docs_dir))  # changed file: it comes back
    results = run_json("--kb", sql_kb_path, "query", "whales songs", "--mode", "sql_text_search")["results"]
    assert [r["metadata"]["name"] for r in results] == ["whales.md"]


def test_documents_show_when_they_were_added_and_from_which_file(sql_kb_path, docs_dir):
    [fox] = [d for d in run_json("--kb", sql_kb_path, "documents")["documents"] if d["name"] == "fox.txt"]
    stat = (docs_dir / "fox.txt").stat()
    assert fox["size"] == stat.st_size and fox["modified"] == stat.st_mtime
    assert fox["added"] and fox["updated"] >= fox["added"]


def test_files_that_gave_no_text_are_listed_as_skipped_with_the_issue_code(sql_kb_path, docs_dir):
    (docs_dir / "empty.txt").write_text("")
    (docs_dir / "blob.bin").write_bytes(bytes(range(256)) * 4)
    run("--kb", sql_kb_path, "build", str(docs_dir))
    rows = {d["name"]: d for d in run_json("--kb", sql_kb_path, "documents")["documents"]}
    assert (rows["empty.txt"]["state"], rows["empty.txt"]["issues"]) == ("skipped", ["empty_document"])
    assert (rows["blob.bin"]["state"], rows["blob.bin"]["issues"]) == ("skipped", ["unsupported_document_type"])
    assert (rows["fox.txt"]["state"], rows["fox.txt"]["issues"]) == ("built", [])
    listing = run("--kb", sql_kb_path, "documents")
    assert "skipped (empty_document)" in listing and "skipped (unsupported_document_type)" in listing
    # the file gets text: the next build takes it in, and the stale issue no longer marks it
    (docs_dir / "empty.txt").write_text("Otters hold hands while they sleep on the water.")
    run("--kb", sql_kb_path, "build", str(docs_dir))
    rows = {d["name"]: d for d in run_json("--kb", sql_kb_path, "documents")["documents"]}
    assert rows["empty.txt"]["state"] == "built" and rows["empty.txt"]["chunks"] == 1


def test_documents_and_documents_show_print_times_in_one_format(sql_kb_path):
    import datetime

    [fox] = [d for d in run_json("--kb", sql_kb_path, "documents")["documents"] if d["name"] == "fox.txt"]
    shown = run("--kb", sql_kb_path, "documents", "show", fox["id"])
    for field in ("modified", "added", "updated"):
        printed = datetime.datetime.fromtimestamp(fox[field]).isoformat(sep=" ", timespec="seconds")
        assert f"{field:<14} {printed}\n" in shown
    assert printed in run("--kb", sql_kb_path, "documents")  # the listing prints the same format
    assert str(fox["added"]) not in shown  # no epoch floats


def test_the_build_report_counts_new_changed_and_unchanged_documents_apart(sql_kb_path, docs_dir):
    (docs_dir / "otters.txt").write_text("Otters hold hands while they sleep.")
    (docs_dir / "fox.txt").write_text("The quick brown fox changed its mind.")
    unchanged = len(run_json("--kb", sql_kb_path, "documents")["documents"]) - 1
    report = run("--kb", sql_kb_path, "build", str(docs_dir))
    assert f"2 document(s) built (1 new, 1 changed; {unchanged} unchanged)" in report
    assert f"0 document(s) built ({unchanged + 2} unchanged)" in run("--kb", sql_kb_path, "build", str(docs_dir))


def test_a_removed_file_built_again_is_explained_in_cli_terms(sql_kb_path, docs_dir):
    run("--kb", sql_kb_path, "remove", "--source", str(docs_dir / "fox.txt"))
    report = run("--kb", sql_kb_path, "build", str(docs_dir))
    assert "document_previously_removed" in report and "heta remove" in report and "heta build --force" in report
    assert "delete_documents" not in report


def test_remove_dry_run_says_what_would_go_and_removes_nothing(sql_kb_path, docs_dir):
    [fox] = [d for d in run_json("--kb", sql_kb_path, "documents")["documents"] if d["name"] == "fox.txt"]
    plan = run_json("--kb", sql_kb_path, "remove", fox["id"], "--dry-run")
    assert plan["documents"] == [{"id": fox["id"], "source": fox["source"]}]
    assert plan["derived"] == {"split_documents": {"chunks": fox["chunks"]}} and fox["chunks"] > 0
    text = run("--kb", sql_kb_path, "remove", fox["id"], "--dry-run")
    assert f"Would remove {fox['id']}" in text and f"split_documents: chunks {fox['chunks']}" in text
    assert fox["id"] in [d["id"] for d in run_json("--kb", sql_kb_path, "documents")["documents"]]
    assert run_json("--kb", sql_kb_path, "query", "quick brown fox", "--mode", "sql_text_search")["results"]


def test_writers_wait_or_fail_while_another_process_writes(sql_kb_path, docs_dir):
    from heta_framework.kb.lock import WriterLock

    with WriterLock(Path(sql_kb_path), "built").acquire(None):
        busy = fails("--kb", sql_kb_path, "build", str(docs_dir), "--wait", "0.2")
        assert "PID" in busy
        assert "PID" in fails("--kb", sql_kb_path, "remove", "--source", str(docs_dir), "--wait", "0")
        assert "PID" in fails("--kb", sql_kb_path, "delete")
        assert run_json("--kb", sql_kb_path, "query", "fox")["results"]  # readers are not blocked


def test_heta_modes_says_when_calibration_switched_a_leg_off(sql_kb_path):
    from heta_framework.builtin.engines.calibration import CACHE_FILE, Calibration, state_key
    from heta_framework.kb import KnowledgeBase

    with KnowledgeBase.load(sql_kb_path) as kb:
        state = state_key(kb)
    off = Calibration(weights={"vector_search": 0.0, "heta_graph_search": 1.0}, pseudo_queries=40,
                      leg_mrr={"vector_search": 0.21, "heta_graph_search": 0.8}, fused_mrr=0.8, equal_weights_mrr=0.62,
                      weight_range="full range: the embedding model does not know french")
    kept = Calibration(weights={"hybrid_search": 1.0, "full_text_search": 0.5}, pseudo_queries=40,
                       leg_mrr={"hybrid_search": 0.7, "full_text_search": 0.9}, fused_mrr=0.9, equal_weights_mrr=0.9)
    path = Path(sql_kb_path) / CACHE_FILE
    path.write_text(json.dumps({"state": state, "modes": {"hybrid_search": off.to_dict(), "heta_rerank_search": kept.to_dict()}}))
    modes = {row["mode"]: row for row in run_json("--kb", sql_kb_path, "modes")["modes"]}
    assert modes["hybrid_search"]["fusion"]["weights"] == {"vector_search": 0.0, "heta_graph_search": 1.0}
    assert modes["hybrid_search"]["note"].startswith("calibration switched vector_search off: it ranks as heta_graph_search alone")
    assert "note" not in modes["heta_rerank_search"] and modes["heta_rerank_search"]["fusion"]["weights"]["full_text_search"] == 0.5
    # a calibration of an earlier build state is not this build's: nothing is shown
    path.write_text(json.dumps({"state": "an-older-build", "modes": {"hybrid_search": off.to_dict()}}))
    assert "fusion" not in {row["mode"]: row for row in run_json("--kb", sql_kb_path, "modes")["modes"]}["hybrid_search"]
