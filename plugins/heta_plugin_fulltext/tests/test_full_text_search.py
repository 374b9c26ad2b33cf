"""One suite, run against both backends (the ``backend`` fixture), on real index folders."""

from __future__ import annotations

import attrs
import pytest
from heta_framework.kb import KnowledgeBase, SourceDocument
from heta_plugin_fulltext import TextIndexStore

FOX, NOTHING, NO_HITS, ANYTHING = "fox", "no terms", "no hits", None

#: (query, what it must find): the fox document first; nothing, because no word is left to search (an issue says so);
#: no hits; or anything, as long as nothing raises
HOSTILE_QUERIES = [
    ('"unbalanced quote fox', FOX),
    ("title:fox", FOX),
    ("AND(", ANYTHING),
    ("fox AND(", FOX),
    ("OR NOT AND", ANYTHING),
    ("*", NOTHING),
    ("?", NOTHING),
    ("fox*", FOX),
    ("wha?es", ANYTHING),
    ("((fox", FOX),
    ("fox))]]", FOX),
    ("[1 TO 5}", ANYTHING),
    ("{}", NOTHING),
    ("fox^3 ~2", FOX),
    ("-fox +dog", FOX),
    ("\\", NOTHING),
    ("🦊🐋", NOTHING),
    ("🦊 fox", FOX),
    ("", NOTHING),
    ("   ", NOTHING),
    ("the of and", NOTHING),  # only stop words
    ("!!! ??? ...", NOTHING),
    ("fox " * 500, FOX),  # 2,000 characters, one repeated word
    ("x" * 2000, NO_HITS),  # one 2,000-character token (tantivy drops it, Whoosh finds nothing)
    (" ".join(f"word{i}" for i in range(300)) + " fox", FOX),  # ~2,400 characters, 301 terms
    ("fox\u202edog", FOX),  # a right-to-left override between the words (a NUL is refused before any mode)
    ("%s %d {0} $1", ANYTHING),
    ("'; DROP TABLE chunks; -- fox", FOX),
]


async def test_build_publishes_asset_with_backend_and_analyzer(make_kb, backend, english_documents):
    kb = await make_kb(english_documents)
    assert kb.available_queries == ["full_text_search"]
    [asset] = kb.search_assets
    assert (asset.kind, asset.name, asset.store) == ("chunk_full_text_index", "chunks", "stores.text")
    assert asset.metadata == {"backend": backend, "analyzer": "english"}
    assert (kb.path / "text_index" / "heta_text_index.json").exists()
    store = kb.get_component("stores.text")
    assert isinstance(store, TextIndexStore)
    assert (store.backend, store.analyzer, store.count()) == (backend, "english", 3)


async def test_english_stemming_and_stop_words(make_kb, search, english_documents):
    kb = await make_kb(english_documents)
    assert (await search(kb, "fox"))[0] == "fox"
    assert (await search(kb, "jumping foxes"))[0] == "fox"  # stems: jumping -> jump, foxes -> fox
    assert (await search(kb, "what is a whale?"))[0] == "whales"
    assert await search(kb, "the of and") == []


async def test_results_carry_score_and_provenance(make_kb, english_documents):
    kb = await make_kb(english_documents)
    response = await kb.query("marine mammals breathe", mode="full_text_search", top_k=5)
    top = response.results[0]
    assert top.document_id == "whales"
    assert top.sources == ("full_text_search",)
    assert top.kind == "chunk"
    assert top.score > 0
    assert [r.score for r in response.results] == sorted((r.score for r in response.results), reverse=True)
    assert top.metadata["source"] == "whales.md"
    assert top.metadata["topic"] == "animals"
    assert "Whales are marine mammals" in top.text
    raw = "# Whales\n\nWhales are marine mammals. They breathe air through a blowhole."
    assert raw[top.metadata["start"] : top.metadata["end"]] == top.text  # offsets point into the document
    assert response.metadata["backend"] in ("whoosh", "tantivy")


async def test_any_text_is_a_valid_query(make_kb, english_documents):
    kb = await make_kb(english_documents)  # one index for the whole list keeps the suite fast
    for text, expected in HOSTILE_QUERIES:
        response = await kb.query(text, mode="full_text_search", top_k=3)
        found = [r.document_id for r in response.results]
        assert len(found) <= 3, text
        if expected == FOX:
            assert found and found[0] == "fox", text  # the words around the syntax are still searched
        elif expected == NO_HITS:
            assert found == [], text
        elif expected == NOTHING:
            assert found == [], text
            assert [issue["code"] for issue in response.issues] == ["no_query_words"], text


async def test_query_syntax_is_searched_as_words(make_kb, search, english_documents):
    kb = await make_kb(english_documents)
    assert (await search(kb, 'whales" OR title:*'))[0] == "whales"
    assert (await search(kb, "dog]] AND( (("))[0] == "fox"
    assert await search(kb, "NOT fox") != []  # NOT is a (stop) word, not an operator


async def test_chinese_query_finds_the_chinese_chunk(make_kb, search, chinese_documents):
    kb = await make_kb(chinese_documents, analyzer="chinese")
    assert (await search(kb, "上海"))[0] == "shanghai"  # a word inside 上海市
    assert (await search(kb, "长江入海"))[0] == "shanghai"
    assert (await search(kb, "熊猫吃什么？"))[0] == "panda"
    assert (await search(kb, "四川的竹子"))[0] == "panda"
    assert await search(kb, "的") == []  # a Chinese stop word alone


async def test_mixed_chinese_and_english(make_kb, search, chinese_documents):
    kb = await make_kb(chinese_documents, analyzer="chinese")
    assert (await search(kb, "python 程序"))[0] == "mixed"
    assert (await search(kb, "GPU"))[0] == "mixed"
    assert (await search(kb, "training neural model"))[0] == "mixed"  # English words are stemmed: models -> model
    assert (await search(kb, "Yangtze river"))[0] == "english"
    assert (await search(kb, "神经网络 training"))[0] == "mixed"


async def test_standard_analyzer_keeps_every_word(make_kb, search, english_documents):
    kb = await make_kb(english_documents, analyzer="standard")
    assert kb.search_assets[0].metadata["analyzer"] == "standard"
    assert (await search(kb, "the"))  # no stop words
    assert await search(kb, "jumping") == []  # no stemming
    assert (await search(kb, "jumps"))[0] == "fox"


async def test_metadata_filters(make_kb, search, english_documents):
    kb = await make_kb(english_documents)
    assert set(await search(kb, "animals mammals language fox")) == {"fox", "whales", "python"}
    assert await search(kb, "fox whales python", filters={"document_id": "whales"}) == ["whales"]
    assert await search(kb, "fox whales python", filters={"source": "python.txt"}) == ["python"]
    assert set(await search(kb, "fox whales python", filters={"topic": "animals"})) == {"fox", "whales"}
    assert set(await search(kb, "fox whales python", filters={"document_id": ["fox", "python"]})) == {"fox", "python"}
    assert await search(kb, "fox whales python", filters={"topic": "animals", "year": 2021}) == ["whales"]
    assert await search(kb, "fox whales python", filters={"year": "2021"}) == []  # typed: the string is not the number
    assert await search(kb, "fox whales python", filters={"author": "Ada Lovelace"}) == ["fox"]  # spaces in a value
    assert await search(kb, "fox whales python", filters={"author": "Ada"}) == []  # exact, not a word match
    assert await search(kb, "fox whales python", filters={"year": 2020.0}) == ["fox"]  # the same number
    assert await search(kb, "fox whales python", filters={"topic": []}) == []
    assert await search(kb, "fox whales python", filters={"no such key": "x"}) == []
    assert await search(kb, "fox", filters={"topic": "computing"}) == []  # filter and words must both match


async def test_filters_do_not_change_scores(make_kb, english_documents):
    kb = await make_kb(english_documents)
    plain = await kb.query("whales mammals", mode="full_text_search")
    filtered = await kb.query("whales mammals", mode="full_text_search", filters={"topic": "animals"})
    assert plain.results[0].score == pytest.approx(filtered.results[0].score)


async def test_reopen_after_load(make_kb, registry, search, english_documents):
    kb = await make_kb(english_documents)
    before = await kb.query("clever foxes", mode="full_text_search")
    path = kb.path
    kb.close()
    reopened = KnowledgeBase.load(path, registry=registry)
    try:
        assert reopened.available_queries == ["full_text_search"]
        after = await reopened.query("clever foxes", mode="full_text_search")
        assert [(r.id, r.text) for r in after.results] == [(r.id, r.text) for r in before.results]
        assert after.results[0].score == pytest.approx(before.results[0].score)
        # adding a document to the reopened index keeps the old ones
        await reopened.build([SourceDocument(id="owl", name="owl.txt", text="Owls hunt mice at night.")])
        assert await search(reopened, "owls") == ["owl"]
        assert (await search(reopened, "fox"))[0] == "fox"
    finally:
        reopened.close()


async def test_reopened_index_keeps_its_analyzer_when_config_changes(make_kb, registry, search, chinese_documents):
    kb = await make_kb(chinese_documents, analyzer="chinese")
    path = kb.path
    kb.close()
    recipe_file = path / "recipe.toml"
    recipe_file.write_text(recipe_file.read_text().replace('analyzer = "chinese"', 'analyzer = "english"'))
    reopened = KnowledgeBase.load(path, registry=registry)
    try:
        assert reopened.search_assets[0].metadata["analyzer"] == "chinese"
        response = await reopened.query("上海", mode="full_text_search")
        assert response.results[0].document_id == "shanghai"
        assert response.metadata["analyzer"] == "chinese"
    finally:
        reopened.close()


async def test_switching_backend_after_build_is_a_clear_error(make_kb, registry, backend, english_documents):
    kb = await make_kb(english_documents)
    path = kb.path
    kb.close()
    other = "tantivy" if backend == "whoosh" else "whoosh"
    recipe_file = path / "recipe.toml"
    recipe_file.write_text(recipe_file.read_text().replace(f'type = "{backend}"', f'type = "{other}"'))
    reopened = KnowledgeBase.load(path, registry=registry)
    with pytest.raises(Exception, match=f"built .*{backend}"):
        await reopened.query("fox", mode="full_text_search")


async def test_delete_documents(make_kb, search, english_documents):
    kb = await make_kb(english_documents)
    assert (await search(kb, "fox"))[0] == "fox"
    await kb.delete_documents(["fox"])
    assert "fox" not in await search(kb, "fox dog whales python")
    assert set(await search(kb, "fox dog whales python")) == {"whales", "python"}
    store = kb.get_component("stores.text")
    assert store.delete_documents(["no-such-document"]) == 0


async def test_changed_document_replaces_its_chunks(make_kb, search, english_documents):
    kb = await make_kb(english_documents)
    await kb.build([SourceDocument(id="fox", name="fox.txt", text="Red pandas climb trees.")])
    assert await search(kb, "fox") == []
    assert await search(kb, "pandas") == ["fox"]


async def test_upsert_replaces_by_chunk_id(make_kb, english_documents):
    kb = await make_kb(english_documents)
    store = kb.get_component("stores.text")
    count = store.count()
    [(chunk, _)] = store.search("blowhole", 1)
    assert store.upsert([attrs.evolve(chunk, text="Whales sing long songs.")]) == 1
    assert store.count() == count
    assert store.search("blowhole", 5) == []
    [(replaced, _)] = store.search("songs", 5)
    assert (replaced.id, replaced.text, replaced.metadata) == (chunk.id, "Whales sing long songs.", chunk.metadata)
    # a batch repeating an id keeps its last version
    assert store.upsert([attrs.evolve(chunk, text="first version"), attrs.evolve(chunk, text="second version")]) == 1
    assert [c.text for c, _ in store.search("version", 5)] == ["second version"]


async def test_delete_plan_lists_the_index_folder(make_kb, english_documents):
    kb = await make_kb(english_documents)
    plan = kb.delete(dry_run=True)
    assert "text_index" in plan.paths
    kb.delete()
    assert not (kb.path / "text_index").exists()
    assert kb.available_queries == []
