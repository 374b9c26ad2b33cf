"""The plugin inside a real knowledge base: registration, availability, provenance, incremental builds, deletion."""

from __future__ import annotations

from pathlib import Path

import heta_plugin_example
import pytest
from heta_framework.errors import ModeUnavailableError, RecipeError, RecipeValidationError
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.testing import make_registry
from heta_plugin_example import IndexTitles

WHALE = """# Whale

Whales are fully aquatic marine mammals.

## Feeding

Baleen whales filter krill from the water.

## Migration

Humpback whales travel thousands of kilometres each year.
"""

REEF = "<html><head><title>Great Barrier Reef</title></head><body><p>The largest coral reef system.</p></body></html>"


@pytest.fixture
def registry():
    # in-process, no installation: core's built-in plugin plus this one
    return make_registry(heta_plugin_example)


@pytest.fixture
def documents(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "whale.md").write_text(WHALE)
    (folder / "reef.html").write_text(REEF)
    (folder / "notes.txt").write_text("Plankton drifts with ocean currents.")
    return folder


def recipe_text(*steps: str) -> str:
    return "\n".join(f'[[steps]]\nstep = "{step}"\n' for step in steps)


def titles_kb(path: Path, registry, **options) -> KnowledgeBase:
    # small chunks, so each Markdown section of WHALE lands in a chunk of its own
    text = recipe_text("parse_documents") + '[[steps]]\nstep = "split_documents"\nchunk_size = 12\nchunk_overlap = 2\n'
    text += '[[steps]]\nstep = "index_titles"\n'
    text += "".join(f"{key} = {value}\n" for key, value in options.items())
    return KnowledgeBase.create(path, Recipe.from_toml(text, registry), registry=registry)


def test_the_plugin_registers_its_step_and_engine(registry):
    [info] = [p for p in registry.plugins if p.name == "heta_plugin_example"]
    assert info.registered == {"steps": ["index_titles"], "query_engines": ["title_search"]}
    assert registry.step_class("index_titles") is IndexTitles
    assert registry.query_engine("title_search").required_assets == heta_plugin_example.TitleSearchEngine.required_assets


async def test_title_search_needs_the_step(tmp_path, registry, documents):
    recipe = Recipe.from_toml(recipe_text("parse_documents", "split_documents", "persist_chunks"), registry)
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    await kb.build([documents])
    assert "title_search" not in kb.available_queries
    assert kb.unavailable_queries()["title_search"] == ["asset title_index is not built"]
    with pytest.raises(ModeUnavailableError, match="asset title_index is not built"):
        await kb.query("whale", mode="title_search")


def test_a_recipe_without_chunks_is_rejected_before_building(tmp_path, registry):
    recipe = Recipe.from_toml(recipe_text("parse_documents", "index_titles"), registry)
    with pytest.raises(RecipeValidationError, match="needs artifact 'chunk_keys'.*add step split_documents"):
        KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)


def test_recipe_options_are_checked(tmp_path, registry):
    with pytest.raises(RecipeError, match="max_heading_level must be between 1 and 6"):
        titles_kb(tmp_path / "kb", registry, max_heading_level=9)
    with pytest.raises(RecipeError, match="heading_level"):
        titles_kb(tmp_path / "kb2", registry, heading_level=2)


async def test_headings_and_titles_are_found_with_provenance(tmp_path, registry, documents):
    kb = titles_kb(tmp_path / "kb", registry)
    report = await kb.build([documents])
    assert not report.issues
    assert "title_search" in kb.available_queries
    assert [(a.kind, a.name, a.store) for a in kb.search_assets] == [("title_index", "titles", "stores.objects")]

    response = await kb.query("whale migration", mode="title_search", top_k=2)
    top = response.results[0]
    assert (top.metadata["matched_kind"], top.metadata["matched_text"]) == ("heading", "Migration")
    assert response.results[1].metadata["matched_text"] == "Whale"
    assert "Humpback whales travel" in top.text
    assert top.metadata["name"] == "whale.md" and top.sources == ("title_search",)
    # offsets point into the parsed text, as for every core mode
    assert WHALE[top.metadata["start"] : top.metadata["end"]] == top.text

    reef = await kb.query("coral reef", mode="title_search")
    assert [r.metadata["matched_text"] for r in reef.results] == ["Great Barrier Reef"]
    notes = await kb.query("notes", mode="title_search")
    assert [r.metadata["name"] for r in notes.results] == ["notes.txt"]


async def test_filters_top_k_and_empty_queries(tmp_path, registry, documents):
    kb = titles_kb(tmp_path / "kb", registry)
    await kb.build([documents])
    everything = await kb.query("whale feeding reef", mode="title_search", top_k=10)
    assert {r.metadata["name"] for r in everything.results} == {"whale.md", "reef.html"}
    one = await kb.query("whale feeding reef", mode="title_search", top_k=1)
    assert len(one.results) == 1
    only_reef = await kb.query("whale feeding reef", mode="title_search", filters={"name": "reef.html"})
    assert [r.metadata["name"] for r in only_reef.results] == ["reef.html"]
    nothing = await kb.query("?!", mode="title_search")
    assert nothing.results == ()
    assert [i["code"] for i in nothing.issues] == ["no_query_words"]


async def test_incremental_build_and_document_deletion(tmp_path, registry, documents):
    kb = titles_kb(tmp_path / "kb", registry)
    await kb.build([documents])
    await kb.build([SourceDocument(text="# Octopus\n\nEight arms.", id="octopus", name="octopus.md")])
    assert [r.document_id for r in (await kb.query("octopus", mode="title_search")).results] == ["octopus"]
    # documents of the first build are still indexed
    assert (await kb.query("whale", mode="title_search")).results

    whale_id = next(d.id for d in kb.documents.values() if d.name == "whale.md")
    await kb.delete_documents([whale_id])
    assert (await kb.query("whale feeding migration", mode="title_search")).results == ()
    assert not (tmp_path / "kb" / "objects" / "title_index" / f"{whale_id}.json").exists()


async def test_delete_removes_the_index_and_keeps_raw_inputs(tmp_path, registry, documents):
    kb = titles_kb(tmp_path / "kb", registry)
    await kb.build([documents])
    index = tmp_path / "kb" / "objects" / "title_index"
    assert len(list(index.glob("*.json"))) == 3
    plan = kb.delete()
    assert "objects/title_index" in plan.paths
    assert not index.exists()
    assert len(list((tmp_path / "kb" / "objects" / "raw").iterdir())) == 3
    assert "title_search" not in kb.available_queries
    # and the build comes back from the raw inputs
    await kb.build()
    assert (await kb.query("whale", mode="title_search")).results


async def test_the_knowledge_base_reloads_with_the_mode(tmp_path, registry, documents):
    kb = titles_kb(tmp_path / "kb", registry, max_heading_level=1)
    await kb.build([documents])
    reloaded = KnowledgeBase.load(tmp_path / "kb", registry=registry)
    assert reloaded.steps == [*reloaded.steps[:2], IndexTitles(max_heading_level=1)]
    headings = await reloaded.query("feeding migration", mode="title_search")
    assert headings.results == ()  # level-2 headings were not indexed
