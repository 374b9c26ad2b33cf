"""`heta build --meta` gives documents importance and tags that memory_search reads."""

from __future__ import annotations

from click.testing import CliRunner
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.cli.main import cli
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.kb.sources import file_document_id
from heta_framework.plugins.registry import PluginRegistry


def test_build_meta_sets_importance_and_tags(tmp_path):
    from heta_plugin_fulltext import IndexFullText

    KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments(), IndexFullText()]),
                         registry=PluginRegistry.from_entry_points()).close()
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "kite.txt").write_text("The red kite nests in oak trees.")
    (notes / "owl.txt").write_text("The red owl hunts at night.")
    runner = CliRunner()
    result = runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "build", str(notes / "kite.txt"), "--meta", "importance=8",
                                 "--meta", "tags=birds, trees", "--meta", "author=Ada"])
    assert result.exit_code == 0, result.output
    assert runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "build", str(notes / "owl.txt"), "--meta", "importance=2"]).exit_code == 0
    with KnowledgeBase.load(tmp_path / "kb") as kb:
        kite = kb.document(file_document_id((notes / "kite.txt").resolve()))  # the id a plain build gives the file
        assert kite.metadata == {"importance": 8, "tags": ["birds", "trees"], "author": "Ada"}
        assert kite.source == str((notes / "kite.txt").resolve())
        response = kb.sync.query("red", mode="memory_search",
                                 options={"weight_recency": 0, "weight_relevance": 0, "update_access": False})
        assert [r.metadata["importance_score_normalized"] for r in response.results] == [0.8, 0.2]
        tagged = kb.sync.query("red", mode="memory_search", options={"tags": ["trees"], "update_access": False})
        assert [r.document_id for r in tagged.results] == [kite.id]

    bad = runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "build", str(notes), "--meta", "importance=11"])
    assert bad.exit_code == 2 and "importance must be a number from 0 to 10" in bad.output
    malformed = runner.invoke(cli, ["--kb", str(tmp_path / "kb"), "build", str(notes), "--meta", "importance"])
    assert malformed.exit_code == 2 and "KEY=VALUE" in malformed.output


def test_heta_serve_refuses_bad_settings_cleanly_and_never_says_serving_first(tmp_path, monkeypatch):
    KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments()]),
                         registry=PluginRegistry.from_entry_points()).close()
    monkeypatch.delenv("HETA_SERVER_TOKEN", raising=False)
    latin1 = tmp_path / "token.txt"
    latin1.write_bytes("s\xe9cret-token-of-length-32-chars!".encode("latin-1"))
    runner = CliRunner()
    kb = ["--kb", str(tmp_path / "kb"), "serve"]
    cases = {
        "nan body": (kb + ["--max-body-mb", "nan"], "is not a size"),
        "inf upload": (kb + ["--max-upload-mb", "inf"], "is not a size"),
        "latin-1 token file": (kb + ["--token-file", str(latin1)], "is not UTF-8 text"),
        "exposed without a token": (kb + ["--host", "0.0.0.0", "--port", "0"], "a token is required"),
    }
    for name, (args, message) in cases.items():
        result = runner.invoke(cli, args)
        assert result.exit_code != 0, name
        assert message in result.output, (name, result.output)
        assert "Traceback" not in result.output and (result.exception is None or isinstance(result.exception, SystemExit)), name
        assert "Serving" not in result.output, (name, result.output)  # nothing claims to serve what will not start
