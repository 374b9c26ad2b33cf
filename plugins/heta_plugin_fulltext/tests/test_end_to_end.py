"""Through ``KnowledgeBase`` with the recipe from the spec, the default store, and a TOML recipe."""

from __future__ import annotations

from importlib.metadata import entry_points

import heta_plugin_fulltext
import pytest
from heta_framework.builtin.steps import ParseDocuments, SplitDocuments
from heta_framework.errors import RecipeError
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.testing import make_registry
from heta_plugin_fulltext import IndexFullText, TextIndexStore


async def test_spec_recipe_with_the_default_whoosh_store(tmp_path):
    registry = make_registry(heta_plugin_fulltext)
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments(), IndexFullText()]), registry=registry)
    report = await kb.build(
        [
            SourceDocument(id="tea", name="tea.txt", text="Green tea is made from unoxidised leaves."),
            SourceDocument(id="coffee", name="coffee.txt", text="Coffee beans are roasted seeds."),
        ]
    )
    assert not report.issues
    assert kb.available_queries == ["full_text_search"]
    assert kb.search_assets[0].metadata == {"backend": "whoosh", "analyzer": "auto"}  # no analyzer named: the documents decide
    response = await kb.query("roasting coffee")  # the default mode
    assert response.results[0].document_id == "coffee"
    assert isinstance(kb.get_component("stores.text"), TextIndexStore)
    step_artifacts = kb.run_record.data["step_artifacts"]["index_full_text"]["chunk_full_text_index"]
    assert step_artifacts["chunks"] == 2
    kb.close()


async def test_toml_recipe_selects_tantivy_and_chinese(tmp_path):
    registry = make_registry(heta_plugin_fulltext)
    recipe = Recipe.from_toml(
        """
        [stores.text]
        type = "tantivy"
        analyzer = "chinese"

        [[steps]]
        step = "parse_documents"
        [[steps]]
        step = "split_documents"
        [[steps]]
        step = "index_full_text"
        batch_size = 1
        """,
        registry,
    )
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    await kb.build(
        [
            SourceDocument(id="a", name="a.txt", text="北京是中国的首都。"),
            SourceDocument(id="b", name="b.txt", text="杭州的西湖很有名。"),
        ]
    )
    assert kb.search_assets[0].metadata == {"backend": "tantivy", "analyzer": "chinese"}
    response = await kb.query("西湖在哪里", mode="full_text_search")
    assert [r.document_id for r in response.results] == ["b"]
    kb.close()


def test_unknown_analyzer_is_a_recipe_error_naming_the_field():
    registry = make_registry(heta_plugin_fulltext)
    with pytest.raises(RecipeError, match=r"stores\.text"):
        Recipe.from_toml('[stores.text]\ntype = "whoosh"\nanalyzer = "klingon"\n', registry)
    with pytest.raises(RecipeError, match=r"stores\.text"):
        Recipe.from_toml('[stores.text]\ntype = "tantivy"\nno_such_option = 1\n', registry)


def test_installed_through_the_heta_entry_point():
    assert any(ep.value == "heta_plugin_fulltext" for ep in entry_points(group="heta"))
    registry = make_registry(heta_plugin_fulltext)
    assert registry.step_class("index_full_text") is IndexFullText
    assert {s.name for s in registry.store_types_for("text")} == {"whoosh", "tantivy"}
    assert "full_text_search" in registry.query_engine_registry().modes
