"""The parts ``KnowledgeBase`` delegates to (``heta_framework.kb.parts``), each on its own: built from
real recipes, registries and folder state, without going through the facade where the part can stand
alone."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from heta_framework.builtin.stores.folder_state import FolderState
from heta_framework.common.models import EmbeddingModel
from heta_framework.contracts.search import SearchAsset
from heta_framework.contracts.steps import StepCleanupPlan
from heta_framework.errors import KnowledgeBaseError, KnowledgeBaseLockedError, UnknownNameError
from heta_framework.kb import KnowledgeBase, KnowledgeModels
from heta_framework.kb.parts.building import stale_lock_issue
from heta_framework.kb.parts.component_set import ComponentSet
from heta_framework.kb.parts.ingest import vanished_documents
from heta_framework.kb.parts.loaded_state import LoadedState
from heta_framework.kb.parts.maintenance import Maintenance
from heta_framework.kb.parts.querying import DEFAULT_MODE_ORDER
from heta_framework.kb.parts.removal import DocumentRemoval

# --- ComponentSet ------------------------------------------------------------------------------------


def test_component_set_keys_are_the_recipes_and_the_default_stores(tmp_path, registry, sql_recipe):
    recipe = attrs.evolve(sql_recipe, models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")))
    components = ComponentSet(tmp_path, recipe, registry)
    assert "models.embedding" in components.keys
    assert {"stores.objects", "stores.sql", "stores.state", "parsers.documents"} <= components.keys
    assert "models.language" not in components.keys


def test_component_set_opens_each_component_once_and_forgets_only_stores(tmp_path, registry, sql_recipe):
    components = ComponentSet(tmp_path, sql_recipe, registry)
    objects = components.get("stores.objects")
    parsers = components.get("parsers.documents")
    assert components.get("stores.objects") is objects  # kept
    assert components.open("stores.objects") is not objects  # open() makes a new one and keeps nothing
    components.forget_stores(close=True)
    assert set(components.opened) == {"parsers.documents"}
    assert components.get("parsers.documents") is parsers
    assert components.get("stores.objects") is not objects  # reopened on next use


def test_component_set_names_what_is_missing(tmp_path, registry, sql_recipe):
    components = ComponentSet(tmp_path, sql_recipe, registry)
    with pytest.raises(KnowledgeBaseError, match=r"no models\.language.*\[models\]"):
        components.get("models.language")
    with pytest.raises(UnknownNameError, match="keys start with models., stores. or parsers."):
        components.get("widgets.blue")


def test_component_set_close_closes_everything_even_after_a_failing_close(tmp_path, registry, sql_recipe, caplog):
    components = ComponentSet(tmp_path, sql_recipe, registry)
    closed = []

    class Closing:
        def __init__(self, name, fails=False):
            self.name, self.fails = name, fails

        def close(self):
            closed.append(self.name)
            if self.fails:
                raise OSError("disk gone")

    components._open.update({"stores.a": Closing("a", fails=True), "stores.b": Closing("b")})
    components.close()
    assert closed == ["a", "b"] and components.opened == {}
    assert "closing stores.a failed" in caplog.text


# --- LoadedState -------------------------------------------------------------------------------------


def _loaded(path: Path, registry, recipe) -> LoadedState:
    return LoadedState(FolderState.open(None, path), ComponentSet(path, recipe, registry))


def test_loaded_state_reads_again_only_after_another_process_commits(tmp_path, registry, sql_recipe):
    mine, theirs = _loaded(tmp_path, registry, sql_recipe), _loaded(tmp_path, registry, sql_recipe)
    assert mine.reload_if_changed() is False
    mine._components.get("stores.objects")
    theirs.removed["doc"] = {"source": "x", "content_hash": "h", "removed": 0}
    theirs.save_removed()
    assert mine.changed_elsewhere()
    assert mine.reload_if_changed() is True
    assert "doc" in mine.removed
    assert "stores.objects" not in mine._components.opened  # stores reopen on what the other process wrote
    assert mine.reload_if_changed() is False


def test_loaded_state_ignores_other_commits_while_it_writes(tmp_path, registry, sql_recipe):
    mine, theirs = _loaded(tmp_path, registry, sql_recipe), _loaded(tmp_path, registry, sql_recipe)
    with mine.writer_sync("testing", wait=None):
        assert mine.writing
        theirs.save_removed()  # as if: a writer never reloads under its own feet
        assert mine.reload_if_changed() is False
        with pytest.raises(KnowledgeBaseLockedError):
            with theirs.writer_sync("second", wait=None):
                pass
    assert not mine.writing
    assert mine.stamp == mine.state.version()  # its own commit is not "another process"


# --- ingest ------------------------------------------------------------------------------------------


def test_vanished_documents_are_file_documents_under_the_given_folders(sql_kb, docs_dir, tmp_path):
    sql_kb.sync.build([docs_dir])
    (docs_dir / "fox.txt").unlink()
    records = sql_kb.documents.values()
    gone = vanished_documents(records, [docs_dir])
    assert [sql_kb.document(d).name for d in gone] == ["fox.txt"]
    assert vanished_documents(records, [tmp_path / "elsewhere"]) == []


# --- building ----------------------------------------------------------------------------------------


def test_stale_lock_issue_names_the_previous_writer():
    issue = stale_lock_issue({"pid": 4242, "host": "box"})
    assert (issue.code, issue.severity, issue.subject.id) == ("stale_writer_lock", "warning", "4242")
    assert "PID 4242 on box" in issue.message


def test_a_build_whose_steps_changed_runs_every_document_again(tmp_path, registry, sql_recipe, docs_dir):
    kb = KnowledgeBase.create(tmp_path / "kb", sql_recipe, registry=registry)
    first = kb.sync.build([docs_dir])
    assert first.document_count == 3
    assert kb.sync.build([docs_dir]).document_count == 0  # nothing pending
    kb.close()
    changed = attrs.evolve(sql_recipe, steps=list(sql_recipe.steps[:2]))  # persist_chunks dropped: the step keys differ
    with KnowledgeBase(tmp_path / "kb", changed, registry) as again:
        report = again.sync.build()
        assert report.document_count == 3 and not report.resumed


# --- querying ----------------------------------------------------------------------------------------


def test_querying_recomputes_why_a_mode_is_missing_when_the_assets_change(sql_kb, docs_dir):
    queries = sql_kb._queries
    assert all(reason.endswith("is not built") for reason in queries.missing("sql_text_search"))
    assert queries.missing("sql_text_search") and "sql_text_search" not in queries.available()
    sql_kb.sync.build([docs_dir])
    assert queries.missing("sql_text_search") == []
    assert "sql_text_search" in queries.available()
    assert "sql_text_search" not in queries.unavailable()


def test_querying_without_a_mode_takes_the_best_available(sql_kb, docs_dir):
    with pytest.raises(KnowledgeBaseError, match="No query mode is available yet"):
        sql_kb.sync.query("fox")
    sql_kb.sync.build([docs_dir])
    response = sql_kb.sync.query("fox")
    expected = next(m for m in DEFAULT_MODE_ORDER if m in sql_kb.available_queries)
    assert response.metadata["mode"] == expected == "sql_text_search"
    assert response.results and "fox" in response.results[0].text.lower()


# --- removal -----------------------------------------------------------------------------------------


def test_removal_refuses_unknown_ids_before_touching_anything(sql_kb, docs_dir):
    sql_kb.sync.build([docs_dir])
    removal: DocumentRemoval = sql_kb._removal
    known = sorted(sql_kb.documents)
    with pytest.raises(KnowledgeBaseError, match="Unknown document id.*'nope'"):
        removal.check_known([known[0], "nope"])
    assert sorted(sql_kb.documents) == known


def test_removal_remembers_only_when_asked(sql_kb, docs_dir):
    sql_kb.sync.build([docs_dir])
    first, second = sorted(sql_kb.documents)[:2]
    with sql_kb._loaded.writer_sync("test", wait=None):
        sql_kb.sync.run(sql_kb._removal.remove([first], remember=True))
        sql_kb.sync.run(sql_kb._removal.remove([second], remember=False))
    assert first in sql_kb.removed_documents and second not in sql_kb.removed_documents
    assert first not in sql_kb.documents and second not in sql_kb.documents
    hits = sql_kb.sync.query("fox whales", mode="sql_text_search").results
    assert not {first, second} & {r.document_id for r in hits}


# --- maintenance -------------------------------------------------------------------------------------


@attrs.frozen
class _RawCleaner:
    """A step whose cleanup plan names raw inputs, which maintenance must refuse."""

    name: str = "raw_cleaner"

    def cleanup_plan(self, artifacts):
        return StepCleanupPlan(paths=("objects/raw/",))


def test_maintenance_never_deletes_raw_inputs(sql_kb):
    maintenance = Maintenance(sql_kb, [_RawCleaner()], path=sql_kb.path, loaded=sql_kb._loaded, close=sql_kb.close)
    with pytest.raises(KnowledgeBaseError, match="raw inputs are never deleted"):
        maintenance.cleanup_paths()


def test_maintenance_dry_run_plans_and_removes_nothing(sql_kb, docs_dir):
    sql_kb.sync.build([docs_dir])
    plan = sql_kb._maintenance.delete(dry_run=True, wait=None)
    assert not plan.deleted and "run_record.json" in plan.paths
    assert all((sql_kb.path / p).exists() for p in plan.paths)
    done = sql_kb._maintenance.delete(dry_run=False, wait=None)
    assert done.deleted and not any((sql_kb.path / p).exists() for p in done.paths)
    assert {r.state for r in sql_kb.documents.values()} == {"pending"}  # the next build rebuilds them
    assert [a for a in sql_kb.search_assets if isinstance(a, SearchAsset)] == []
