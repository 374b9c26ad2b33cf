"""Wiki pages built offline (extractive): what is stored, the markdown a caller sees, the three search modes, and pages
that follow their documents (unchanged: untouched; changed: rewritten and re-indexed; removed: gone everywhere)."""

from __future__ import annotations

import pytest
from heta_framework.kb import KnowledgeBase, SourceDocument
from heta_framework.testing.conformance import QueryEngineSuite
from heta_plugin_graph.testing import DOCUMENTS, offline_models
from heta_plugin_wiki import WikiFullTextSearchEngine, WikiHybridSearchEngine, WikiVectorSearchEngine
from heta_plugin_wiki.show import show_page
from heta_plugin_wiki.testing import recipe
from heta_plugin_wiki.wiki import persist

WIKI_MODES = ("wiki_vector_search", "wiki_full_text_search", "wiki_hybrid_search")
OCEAN_AGAIN = SourceDocument(id="ocean", name="ocean.txt", text="Sea otters float in kelp forests of the Pacific Ocean. "
                             "Sea otters use stones to open shellfish.")


@pytest.fixture(scope="module")
def offline_kb(built_path, wiki_registry):
    kb = KnowledgeBase.load(built_path, registry=wiki_registry)
    yield kb
    kb.close()


def stats(report, name):
    return next(s.stats for s in report.steps if s.name == name)


def test_the_modes_appear_with_the_pages_and_the_agent_modes_need_a_language_model(tmp_path, wiki_registry, offline_kb):
    with KnowledgeBase.create(tmp_path / "kb", recipe(offline_models()), registry=wiki_registry) as unbuilt:
        assert not set(WIKI_MODES) & set(unbuilt.available_queries)
    assert set(WIKI_MODES) <= set(offline_kb.available_queries)
    reasons = offline_kb.unavailable_queries()
    for mode in ("agent_search", "wiki_agent_search"):
        assert mode not in offline_kb.available_queries and any("models.language" in r for r in reasons[mode])


def test_a_page_per_document_with_title_summary_sections_entities_and_links(offline_kb):
    objects = offline_kb.get_component("stores.objects")
    index = persist.load_index(objects)
    assert set(index) == {d.id for d in DOCUMENTS}
    ocean = persist.load_page(objects, "ocean")
    assert ocean.document_id == "ocean" and ocean.origin == "extractive" and ocean.title == "Ocean"
    assert ocean.summary.startswith("The Pacific Ocean is the largest ocean on Earth.")
    assert "Pacific Ocean" in ocean.entities and "Coral" not in ocean.entities  # a sentence's first word is no name
    assert " ".join(s.text for s in ocean.sections).count("Great Barrier Reef") == 1  # every sentence, once
    # ocean and rivers both name the Pacific Ocean: each links to the other, space links to neither
    assert index["ocean"]["related"] == ["rivers"] and index["rivers"]["related"] == ["ocean"] and index["space"]["related"] == []
    markdown = show_page(offline_kb, "ocean")
    assert markdown.startswith("# Ocean\n") and "## Key entities" in markdown and "- [Rivers](wiki:rivers)" in markdown
    assert "Source: document `ocean`" in markdown
    listing = show_page(offline_kb, "index")
    assert listing.startswith("# Wiki index") and all(f"(wiki:{d.id})" in listing for d in DOCUMENTS)


def test_a_caller_sees_only_links_and_index_entries_of_documents_they_may_read(offline_kb):
    assert "wiki:rivers" not in show_page(offline_kb, "ocean", readable=lambda d: d != "rivers")
    assert "wiki:rivers" not in show_page(offline_kb, "index", readable=lambda d: d != "rivers")
    with pytest.raises(KeyError):
        show_page(offline_kb, "rivers", readable=lambda d: d != "rivers")


@pytest.mark.parametrize("mode", WIKI_MODES)
def test_each_mode_finds_the_page_section_that_answers(offline_kb, mode):
    response = offline_kb.sync.query("blue whales feed on krill", mode=mode, top_k=3)
    top = response.results[0]
    assert top.kind == "wiki_section" and top.document_id == "ocean" and top.metadata["page_id"] == "wiki:ocean"
    assert "krill" in top.text and response.issues == []
    assert offline_kb.sync.query("上海港", mode="wiki_full_text_search", top_k=1).results[0].document_id == "shanghai"


def test_pages_follow_their_documents(kb_copy):
    kb = kb_copy()
    again = kb.sync.build(list(DOCUMENTS))
    assert not any(s.name == "build_wiki_pages" for s in again.steps)  # nothing changed: the step does not run

    report = kb.sync.build([OCEAN_AGAIN])
    assert stats(report, "build_wiki_pages")["pages_written"] == 1
    assert stats(report, "index_wiki_pages")["section_vectors_written"] == stats(report, "split_wiki_pages")["sections_written"]
    objects = kb.get_component("stores.objects")
    assert "Sea otters" in persist.load_page(objects, "ocean").summary
    for mode in WIKI_MODES:
        found = kb.sync.query("blue whales krill", mode=mode, top_k=10).results
        assert all("krill" not in r.text for r in found), mode  # the old page's sections are gone from every index
        assert kb.sync.query("sea otters kelp", mode=mode, top_k=1).results[0].document_id == "ocean"
    assert persist.load_index(objects)["rivers"]["related"] == ["ocean"]  # still both name the Pacific Ocean

    kb.sync.delete_documents(["ocean"])
    index = persist.load_index(objects)
    assert "ocean" not in index and persist.load_page(objects, "ocean") is None
    assert index["rivers"]["related"] == []
    assert not any(s["document_id"] == "ocean" for s in persist.load_sections(objects))
    for mode in WIKI_MODES:
        assert all(r.document_id != "ocean" for r in kb.sync.query("sea otters", mode=mode, top_k=10).results), mode


class _WikiSuite(QueryEngineSuite):
    known_query = ("blue whales feed on krill", "ocean")

    @pytest.fixture
    def registry(self, wiki_registry):
        return wiki_registry

    @pytest.fixture
    def knowledge_base_path(self, built_path):
        return built_path


class TestWikiVectorSearch(_WikiSuite):
    mode = "wiki_vector_search"

    @pytest.fixture
    def engine(self):
        return WikiVectorSearchEngine()


class TestWikiFullTextSearch(_WikiSuite):
    mode = "wiki_full_text_search"

    @pytest.fixture
    def engine(self):
        return WikiFullTextSearchEngine()


class TestWikiHybridSearch(_WikiSuite):
    mode = "wiki_hybrid_search"

    @pytest.fixture
    def engine(self):
        return WikiHybridSearchEngine()


def test_full_text_scores_do_not_depend_on_sections_the_caller_may_not_read(offline_kb):
    from heta_plugin_wiki.wiki.lexical import bm25

    everyone = offline_kb.sync.query("Pacific Ocean", mode="wiki_full_text_search", top_k=10)
    only_ocean = offline_kb.sync.query("Pacific Ocean", mode="wiki_full_text_search", top_k=10, filters={"document_id": "ocean"})
    assert {r.document_id for r in everyone.results} == {"ocean", "rivers"} and {r.document_id for r in only_ocean.results} == {"ocean"}
    # the scores are those of a wiki holding ocean's sections alone: rivers (hidden here) changes none of them
    ocean = [s for s in persist.load_sections(offline_kb.get_component("stores.objects")) if s["document_id"] == "ocean"]
    alone = {s["id"]: score for s, score in bm25("Pacific Ocean", ocean, 10)}
    assert {r.id: r.score for r in only_ocean.results} == pytest.approx(alone)
    assert {r.id: r.score for r in everyone.results if r.document_id == "ocean"} != pytest.approx(alone)
