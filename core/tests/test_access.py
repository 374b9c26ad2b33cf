"""Access lists from every source (build, SourceDocument, sidecar files, recipe rules), their precedence, changing
them without a rebuild, the audit log, and the CLI's --access / --as / heta access; core's SQL recipe, real files."""

from __future__ import annotations

import json
import logging

import pytest
from click.testing import CliRunner
from heta_framework.cli.main import cli
from heta_framework.contracts.access import AccessPolicy, AccessRule, AccessScope, check_principals
from heta_framework.errors import InvalidAccessError, KnowledgeBaseError, RecipeError
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing.sample_kb import SQL_RECIPE

REGISTRY = PluginRegistry.from_entry_points(strict=True)


def make_kb(path, **recipe_extra) -> KnowledgeBase:
    return KnowledgeBase.create(path, Recipe.from_dict({**SQL_RECIPE, **recipe_extra}, REGISTRY), registry=REGISTRY)


def found(kb, text, principals=None) -> set[str]:
    return {r.document_id for r in kb.sync.query(text, mode="sql_text_search", top_k=20, principals=principals).results}


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "docs"
    (root / "hr" / "pay").mkdir(parents=True)
    (root / "handbook.txt").write_text("Holiday policy: every employee gets holiday leave.")
    (root / "hr" / "salaries.txt").write_text("Holiday pay bands for the salaries of 2026.")
    (root / "hr" / "pay" / "bonus.txt").write_text("Holiday bonus for the board only.")
    (root / "hr" / ".access").write_text("group:hr\n# the people team\n")
    (root / "hr" / "pay" / "bonus.txt.access").write_text("ceo\n")
    return root


def test_sidecars_give_access_closest_first_and_are_no_documents(tmp_path, folder):
    with make_kb(tmp_path / "kb") as kb:
        report = kb.sync.build([folder])
        sources = {record.source.rsplit("/", 1)[-1]: record for record in kb.documents.values()}
        assert set(sources) == {"handbook.txt", "salaries.txt", "bonus.txt"}  # the .access files are not documents
        assert not [i for i in report.ingest.issues if i.code != "hidden_file_skipped"]
        assert sources["handbook.txt"].access is None and kb.readers(sources["handbook.txt"].id) == ("public",)
        assert sources["salaries.txt"].access == ("group:hr",)
        assert sources["bonus.txt"].access == ("ceo",)  # its own sidecar beats the folder's
        assert found(kb, "holiday") == {sources["handbook.txt"].id}
        assert found(kb, "holiday", ["group:hr"]) == {sources["handbook.txt"].id, sources["salaries.txt"].id}
        assert found(kb, "holiday", ["ceo", "group:hr"]) == {r.id for r in sources.values()}


def test_a_bad_sidecar_keeps_its_document_out(tmp_path, folder):
    (folder / "hr" / "pay" / "bonus.txt.access").write_text("ceo\n  \x07bell\n")
    with make_kb(tmp_path / "kb") as kb:
        report = kb.sync.build([folder])
        [issue] = [i for i in report.ingest.issues if i.code == "invalid_access_file"]
        assert issue.severity == "error" and "bonus.txt" in issue.subject.id
        assert {r.source.rsplit("/", 1)[-1] for r in kb.documents.values()} == {"handbook.txt", "salaries.txt"}


def test_precedence_build_list_then_own_then_rule_then_kept(tmp_path, folder):
    rules = {"access": {"default": ["group:staff"], "rules": [{"glob": "handbook.txt", "principals": ["public"]}]}}
    with make_kb(tmp_path / "kb", **rules) as kb:
        kb.sync.build([folder])
        by_name = {record.source.rsplit("/", 1)[-1]: record.id for record in kb.documents.values()}
        assert kb.readers(by_name["handbook.txt"]) == ("public",)  # the rule
        kb.sync.build([SourceDocument(text="A holiday memo nobody listed.", id="memo")])
        assert kb.readers("memo") == ("group:staff",)  # the default of a private knowledge base
        assert found(kb, "holiday") == {by_name["handbook.txt"]}
        # the build's own list beats sidecars and rules, and re-embeds nothing
        report = kb.sync.build([folder], access=["auditor"])
        assert report.ingest.stats["documents_access_changed"] == 3 and report.document_count == 0
        assert {kb.readers(i) for i in by_name.values()} == {("auditor",)}
        # a plain build brings back what sidecars and rules say, and a document without either keeps its list
        kb.sync.build([folder])
        assert kb.readers(by_name["handbook.txt"]) == ("public",) and kb.readers(by_name["salaries.txt"]) == ("group:hr",)
        kb.sync.build([SourceDocument(text="A holiday memo nobody listed.", id="memo", access=["alice"])])
        kb.sync.build([SourceDocument(text="A holiday memo nobody listed.", id="memo")])
        assert kb.readers("memo") == ("alice",)  # never more public by accident


def test_set_access_changes_only_the_catalog_and_is_audited(tmp_path, caplog):
    with make_kb(tmp_path / "kb") as kb:
        kb.sync.build([SourceDocument(text="Penicillin notes.", id="notes")])
        runs = len(kb.run_record.runs)
        caplog.set_level(logging.INFO, logger="heta.audit")
        assert [r.id for r in kb.set_access(["notes"], ["group:med"], actor="admin")] == ["notes"]
        assert found(kb, "penicillin") == set() and found(kb, "penicillin", ["group:med"]) == {"notes"}
        assert kb.set_access(["notes"], ["group:med"]) == []  # no change, nothing written
        kb.set_access(["notes"], None)
        assert found(kb, "penicillin") == {"notes"}
        assert len(kb.run_record.runs) == runs  # no build ran
        with pytest.raises(KnowledgeBaseError, match="No document with id 'nope'"):
            kb.set_access(["notes", "nope"], ["x"])
        assert kb.document("notes").access is None  # the refused call changed nothing
    records = [json.loads(r.getMessage()) for r in caplog.records if r.name == "heta.audit"]
    first = next(r for r in records if r["operation"] == "set_access")
    assert first["actor"] == "admin" and first["documents"] == ["notes"] and first["access"] == ["group:med"]


def test_another_process_sees_an_access_change_on_its_next_query(tmp_path):
    with make_kb(tmp_path / "kb") as writer:
        writer.sync.build([SourceDocument(text="Penicillin notes.", id="notes")])
        with KnowledgeBase.load(tmp_path / "kb", registry=REGISTRY) as reader:
            assert found(reader, "penicillin") == {"notes"}
            writer.set_access(["notes"], ["group:med"])
            assert found(reader, "penicillin") == set()


def test_invalid_principals_and_access_tables_are_refused():
    for bad in ("alice", [""], [" alice"], ["a\x00b"], ["x" * 300], [3]):
        with pytest.raises(InvalidAccessError):
            check_principals(bad)
    assert check_principals(["b", "a", "b"]) == ("a", "b")
    with pytest.raises(RecipeError, match=r"\$\.access\.default"):
        Recipe.from_dict({**SQL_RECIPE, "access": {"default": "public"}}, REGISTRY)
    with pytest.raises(RecipeError, match=r"\$\.access\.rules\[0\]"):
        Recipe.from_dict({**SQL_RECIPE, "access": {"rules": [{"glob": "hr/**"}]}}, REGISTRY)
    with pytest.raises(RecipeError, match="unknown key"):
        Recipe.from_dict({**SQL_RECIPE, "access": {"defaults": ["x"]}}, REGISTRY)


def test_the_recipe_keeps_its_access_table(tmp_path):
    policy = {"default": ["group:staff"], "rules": [{"glob": "hr/**", "principals": ["group:hr"]}]}
    with make_kb(tmp_path / "kb", access=policy):
        pass
    recipe = KnowledgeBase.load(tmp_path / "kb", registry=REGISTRY).recipe
    assert recipe.access == AccessPolicy(default=("group:staff",), rules=(AccessRule("hr/**", ("group:hr",)),))
    assert recipe.access.for_source("/data/hr/pay.txt") == ("group:hr",) and recipe.access.for_source("/data/handbook.txt") is None


def test_a_scope_narrows_a_document_filter_and_never_widens_it():
    scope = AccessScope(principals=frozenset({"a"}), visible=frozenset({"d1", "d2"}))
    assert scope.restrict({"topic": "x"}) == {"topic": "x", "document_id": frozenset({"d1", "d2"})}
    assert scope.restrict({"document_id": ["d2", "d3"]})["document_id"] == frozenset({"d2"})
    assert scope.restrict({"document_id": "d3"})["document_id"] == frozenset()
    assert AccessScope().restrict({"document_id": "d3"}) == {"document_id": "d3"}


def test_the_cli_builds_with_access_queries_as_principals_and_changes_lists(tmp_path, folder):
    runner = CliRunner()
    kb = str(tmp_path / "kb")
    make_kb(tmp_path / "kb").close()
    assert runner.invoke(cli, ["--kb", kb, "build", str(folder / "handbook.txt"), "--access", "group:ops"]).exit_code == 0

    def query(*extra):
        result = runner.invoke(cli, ["--kb", kb, "query", "holiday", "-m", "sql_text_search", "--json", *extra])
        assert result.exit_code == 0, result.output
        return [r["metadata"]["document_id"] for r in json.loads(result.output)["results"]]

    assert query() == [] and len(query("--as", "group:ops")) == 1
    [row] = json.loads(runner.invoke(cli, ["--kb", kb, "documents", "--json"]).output)["documents"]
    assert row["readers"] == ["group:ops"]
    changed = runner.invoke(cli, ["--kb", kb, "access", row["id"], "--set", "public", "--json"])
    assert json.loads(changed.output)["documents"][0]["readers"] == ["public"] and len(query()) == 1
    refused = runner.invoke(cli, ["--kb", kb, "query", "holiday", "--as", " spaced"])
    assert refused.exit_code != 0 and "Invalid principal" in refused.output and "Traceback" not in refused.output
    assert runner.invoke(cli, ["--kb", kb, "build", "--access", "x"]).exit_code == 2  # --access needs paths


def test_matches_filters_takes_scalars_lists_and_a_scopes_set():
    from heta_framework.contracts.access import VisibleDocuments
    from heta_framework.contracts.query_input import matches_filters

    visible = VisibleDocuments({"a", "b"})
    assert matches_filters({"document_id": "a", "lang": "en"}, {"document_id": visible, "lang": ["en", "fr"]})
    assert not matches_filters({"document_id": "c"}, {"document_id": visible})
    assert not matches_filters({"document_id": ["a"]}, {"document_id": visible})  # unhashable: in no set, no TypeError
    assert not matches_filters({}, {"document_id": visible}) and matches_filters({"page": 2}, {"page": 2})
    assert not matches_filters({"lang": "de"}, {"lang": ("en", "fr")})
