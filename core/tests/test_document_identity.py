"""Document ids: taken literally, stored under collision-free keys, refused before anything is written.

Issue 13: ids "dup" and "/dup" shared object keys, the build failed with "upsert got the same id
twice" and every later build repeated it; "..", NUL and 300-character ids raised raw errors.
"""

from __future__ import annotations

import pytest
from heta_framework.errors import InvalidDocumentIdError
from heta_framework.kb import SourceDocument
from heta_framework.kb.documents import MAX_DOCUMENT_ID_LENGTH, document_key

LITERAL_IDS = ["dup", "/dup", "sub/dir/dup", "sub//dir/dup", "Dup", "dup.txt", "x" * 300, "é/ü " * 900]


async def _texts_found(kb, words):
    found = {}
    for word in words:
        response = await kb.query(word, mode="sql_text_search", top_k=5)
        found[word] = {r.metadata["document_id"] for r in response.results}
    return found


async def test_ids_that_used_to_collide_are_separate_documents_and_rebuild(sql_kb):
    words = [f"marker{i}word" for i in range(len(LITERAL_IDS))]
    documents = [SourceDocument(text=f"This note holds {word} and nothing else.", id=doc_id) for doc_id, word in zip(LITERAL_IDS, words)]
    report = await sql_kb.build(documents)
    assert report.document_count == len(LITERAL_IDS)
    assert set(sql_kb.documents) == set(LITERAL_IDS)
    assert await _texts_found(sql_kb, words) == {word: {doc_id} for doc_id, word in zip(LITERAL_IDS, words)}
    keys = {document_key(doc_id) for doc_id in LITERAL_IDS}
    assert len(keys) == len(LITERAL_IDS)
    assert all(len(key) <= 128 and "/" not in key and "." not in key for key in keys)
    raw = sorted(p.name for p in (sql_kb.path / "objects" / "raw").iterdir())
    assert len(raw) == len(LITERAL_IDS)
    # the knowledge base stays buildable: a rebuild and a new document both work
    assert (await sql_kb.build(rebuild=True)).document_count == len(LITERAL_IDS)
    await sql_kb.build([SourceDocument(text="A later note about herons.", id="dup/later")])
    assert "dup/later" in sql_kb.documents


def test_ids_heta_makes_itself_keep_their_old_keys():
    # knowledge bases built before the key scheme stay readable: their ids are plain keys
    for plain in ("0123456789abcdef", "my-notes_2024"):
        assert document_key(plain) == plain
    assert document_key("Dup") != document_key("dup")  # no clash on case-insensitive file systems
    assert document_key("Dup").startswith("_")


@pytest.mark.parametrize(
    ("bad_id", "message"),
    [
        ("", "must not be empty"),
        ("   ", "must not be empty"),
        ("..", "'..' path segments"),
        ("a/../b", "'..' path segments"),
        ("./a", "'..' path segments"),
        ("nul\x00id", "NUL or other control characters"),
        ("tab\tid", "NUL or other control characters"),
        ("half\ud800", "lone surrogate"),
        ("y" * (MAX_DOCUMENT_ID_LENGTH + 1), f"at most {MAX_DOCUMENT_ID_LENGTH} characters"),
    ],
)
async def test_invalid_ids_are_refused_before_anything_is_written(sql_kb, bad_id, message):
    good = SourceDocument(text="A good note about cranes.", id="good")
    with pytest.raises(InvalidDocumentIdError, match="nothing was written") as raised:
        await sql_kb.build([good, SourceDocument(text="A bad one.", id=bad_id)])
    assert message in str(raised.value)
    assert raised.value.code == "invalid_document_id"
    assert sql_kb.documents == {}
    assert not (sql_kb.path / "catalog.json").exists()
    raw = sql_kb.path / "objects" / "raw"
    assert not raw.exists() or not any(raw.iterdir())
    # the refused build left nothing behind that stops the next one
    assert (await sql_kb.build([good])).document_count == 1


async def test_one_id_given_twice_with_different_content_is_refused(sql_kb):
    with pytest.raises(InvalidDocumentIdError, match="given twice with different content"):
        await sql_kb.build([SourceDocument(text="one", id="same"), SourceDocument(text="two", id="same")])
    assert sql_kb.documents == {}
    # the same content twice is simply one document
    report = await sql_kb.build([SourceDocument(text="one text", id="same"), SourceDocument(text="one text", id="same")])
    assert report.document_count == 1
