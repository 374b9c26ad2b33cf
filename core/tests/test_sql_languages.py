"""sql_text_search in Chinese and in other languages: real SQLite FTS5 files, real analysis."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from heta_framework.builtin.steps.parse import ParseDocuments
from heta_framework.builtin.steps.persist import PersistChunks
from heta_framework.builtin.steps.split import SplitDocuments
from heta_framework.builtin.stores.sqlite_chunks import SQLiteChunkStore, SQLiteChunkStoreConfig
from heta_framework.kb import KnowledgeBase
from heta_framework.kb.documents import Chunk
from heta_framework.kb.recipe import Recipe, StoreConfig
from heta_framework.testing.languages import FRENCH_ARTICLES, FRENCH_QUERIES

CHINESE_SET = Path(__file__).resolve().parents[2] / "bench" / "data" / "chinese_known_items.json"


def chunk(chunk_id: str, text: str) -> Chunk:
    return Chunk(id=chunk_id, document_id=chunk_id, index=0, text=text, start=0, end=len(text), source=f"{chunk_id}.txt", page=None, metadata={})


def top_ids(store: SQLiteChunkStore, query: str, k: int = 10) -> list[str]:
    return [c.id for c, _ in store.search_text(query, k)]


def test_paraphrased_chinese_questions_find_their_documents(tmp_path):
    data = json.loads(CHINESE_SET.read_text(encoding="utf-8"))
    store = SQLiteChunkStore(tmp_path / "chunks.sqlite")
    store.upsert_chunks([chunk(d["id"], d["text"]) for d in data["documents"]])
    first = [top_ids(store, q["question"], 1) for q in data["questions"]]
    # a whole-question phrase matched nothing before (29 of 30 empty); character pairs find the document
    assert all(first)
    hits = sum(ids == [q["document"]] for ids, q in zip(first, data["questions"]))
    assert hits >= 27


def test_a_file_written_before_analyzers_keeps_working(tmp_path):
    path = tmp_path / "chunks.sqlite"
    # the schema and rows exactly as the old store wrote them: no settings table, one token per CJK character
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE chunks (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, document_id TEXT NOT NULL,"
        " chunk_index INTEGER NOT NULL, text TEXT NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL,"
        " source TEXT NOT NULL, page INTEGER, metadata TEXT NOT NULL);"
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');"
    )
    for rowid, (cid, text) in enumerate([("tea", "白茶的制作讲究自然萎凋"), ("river", "长江发源于青藏高原")], start=1):
        db.execute("INSERT INTO chunks VALUES (?, ?, ?, 0, ?, 0, ?, 's', NULL, '{}')", (rowid, cid, cid, text, len(text)))
        db.execute("INSERT INTO chunks_fts (rowid, body) VALUES (?, ?)", (rowid, " ".join(text)))
    db.commit()
    db.close()

    store = SQLiteChunkStore(path, analyzer="french")  # the recipe changed since: the file's own analysis wins
    assert store.analyzer == "standard"
    assert top_ids(store, "白茶怎么制作") == ["tea"]
    assert top_ids(store, "长江的源头") == ["river"]


def test_a_language_analyzer_matches_other_forms_of_a_word(tmp_path):
    texts = [("house", "Les maisons anciennes du village ont été restaurées."), ("bridge", "Le pont traverse la rivière.")]
    standard = SQLiteChunkStore(tmp_path / "standard.sqlite", analyzer="standard")
    french = SQLiteChunkStore(tmp_path / "french.sqlite", analyzer="french")
    for store in (standard, french):
        store.upsert_chunks([chunk(cid, text) for cid, text in texts])
    assert top_ids(standard, "maison ancienne") == []
    assert top_ids(french, "maison ancienne") == ["house"]
    # stop words carry nothing: "la" alone is no query in French
    assert french.query_terms("la les de") == []
    reopened = SQLiteChunkStore(tmp_path / "french.sqlite")  # the analyzer comes from the file
    assert reopened.analyzer == "french" and top_ids(reopened, "restaurée") == ["house"]


def test_auto_analyses_each_chunk_in_its_own_language(tmp_path):
    store = SQLiteChunkStore(tmp_path / "chunks.sqlite", analyzer="auto")
    store.upsert_chunks(
        [
            chunk("fr", "Les chevaux galopaient dans les prairies normandes pendant les longues journées d'été."),
            chunk("es", "Las bibliotecas públicas prestaron miles de libros durante las vacaciones escolares."),
            chunk("en", "The engineers were testing running engines in the laboratories all night."),
            chunk("zh", "大熊猫生活在四川的竹林里。"),
        ]
    )
    reopened = SQLiteChunkStore(tmp_path / "chunks.sqlite", analyzer="auto")
    assert reopened._query_languages("cheval") == ["english", "french", "spanish", None]  # a quarter each: all main
    assert top_ids(reopened, "cheval galopant prairie")[0] == "fr"
    assert top_ids(reopened, "biblioteca pública libro")[0] == "es"
    assert top_ids(reopened, "engineer tested engine laboratory")[0] == "en"
    assert top_ids(reopened, "熊猫吃竹子")[0] == "zh"


def test_unknown_analyzer_is_a_config_error():
    with pytest.raises(ValueError, match="analyzer must be one of"):
        SQLiteChunkStoreConfig(analyzer="klingon")


async def test_a_query_with_nothing_to_search_for_says_so(tmp_path, registry):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Les maisons anciennes du village.", encoding="utf-8")
    recipe = Recipe(
        stores={"sql": StoreConfig(type="sqlite", options={"analyzer": "french"})},
        steps=[ParseDocuments(), SplitDocuments(chunk_size=200, chunk_overlap=0), PersistChunks()],
    )
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    await kb.build([docs])
    found = await kb.query("maison", mode="sql_text_search")
    assert len(found.results) == 1 and "issues" not in found.metadata
    assert found.metadata["analyzer"] == "french"
    nothing = await kb.query("les ??? ✨", mode="sql_text_search")
    assert nothing.results == ()
    assert [i["code"] for i in nothing.metadata["issues"]] == ["no_query_words"]
    unmatched = await kb.query("zeppelin", mode="sql_text_search")  # words the index has not seen: no issue
    assert unmatched.results == () and "issues" not in unmatched.metadata


def test_language_detection_names_an_analyzer():
    from heta_framework.text.languages import detect_language

    assert detect_language("Les chevaux galopaient dans les prairies normandes pendant l'été.") == "french"
    assert detect_language("Las bibliotecas públicas prestaron miles de libros durante las vacaciones.") == "spanish"
    assert detect_language("Die Kinder spielten gestern in den großen Gärten hinter den Häusern.") == "german"
    assert detect_language("Москва — столица России и крупнейший город страны.") == "russian"
    assert detect_language("大熊猫主要生活在四川的山区。") == "chinese"
    assert detect_language("12345 !!! 3.14", default="english") == "english"  # no letters: nothing to detect




def test_a_name_in_another_script_changes_nothing_for_french_queries(tmp_path):
    # py3langid calls the first article Russian (0.998) for its Cyrillic name; auto must index it as French
    # and must not analyse French queries as Russian
    auto = SQLiteChunkStore(tmp_path / "auto.sqlite")  # no analyzer named: a new file follows its documents
    french = SQLiteChunkStore(tmp_path / "french.sqlite", analyzer="french")
    for store in (auto, french):
        store.upsert_chunks([chunk(cid, text) for cid, text in FRENCH_ARTICLES])
    assert auto.analyzer == "auto" and auto._language_counts() == {"french": len(FRENCH_ARTICLES)}
    for query in FRENCH_QUERIES:
        assert top_ids(auto, query) == top_ids(french, query) != []


def test_queries_are_analysed_in_the_main_languages_and_their_own():
    from heta_framework.text.languages import query_languages

    assert query_languages({}, "anything") == ["standard"]  # nothing counted yet
    assert query_languages({"french": 999, "russian": 1}, "Qui garde le but ?") == ["french"]  # a stray language: not used
    assert query_languages({"english": 60, "french": 40}, "goal") == ["english", "french"]
    # a query clearly written in a language the index holds is analysed in it alone; an unclear one in the main ones
    assert query_languages({"english": 95, "french": 5}, "Qui a gagné le prix Nobel de physique ?") == ["french"]
    assert query_languages({"english": 60, "french": 40}, "Who won the Nobel prize in physics?") == ["english"]
    assert query_languages({"english": 95, "french": 5}, "Paris") == ["english"]
    assert query_languages({"english": 95, "spanish": 5}, "Qui a gagné le prix Nobel de physique ?") == ["english"]  # not held
    assert query_languages({"english": 95, "standard": 5}, "上海的人口是多少") == ["standard"]  # CJK: character pairs


def test_an_unclear_chunk_takes_the_main_language_and_a_foreign_name_is_ignored():
    from heta_framework.text.languages import chunk_languages

    texts = [FRENCH_ARTICLES[0][1], "glacier glacier glacier", "大熊猫生活在四川的竹林里。", "2024 — 2025"]
    assert chunk_languages(texts, {"english": 200}) == ["french", "english", "standard", "standard"]
    assert chunk_languages(["glacier glacier glacier"], {}) == ["spanish"]  # nothing to lean on: the best guess
