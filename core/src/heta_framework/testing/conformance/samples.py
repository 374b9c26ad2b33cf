"""Inputs every conformance suite throws at a backend: strings that break naive quoting, and many scripts."""

from __future__ import annotations

#: strings that break backends that splice values into SQL, query syntax, JSON paths or file names
HOSTILE_STRINGS = (
    "'; DROP TABLE chunks; --",
    'say "hello" \\ goodbye',
    "O'Brien's",
    "100% _wild_ *card* ?",
    "a AND b OR NOT c",
    "(unbalanced [brackets {",
    "field:value",
    '$."path"[0]',
    "<script>alert(1)</script>",
    "line\nbreak\ttab",
    "emoji 🦊 fox",
)

#: the same idea in several scripts; each keeps a distinctive word findable by itself
UNICODE_TEXTS = {
    "zh": "上海市是中国的直辖市之一",
    "ja": "東京は日本の首都です",
    "ko": "서울은 한국의 수도이다",
    "de": "Zürich liegt am Zürichsee",
    "el": "Η Αθήνα είναι πρωτεύουσα",
    "ru": "Москва столица России",
}


def make_chunk(chunk_id: str, document_id: str, text: str, index: int = 0, source: str = "", page: int | None = None, **metadata):
    """A ``Chunk`` whose offsets match its text (what ``SplitDocuments`` would write)."""
    from heta_framework.contracts.documents import Chunk

    return Chunk(id=chunk_id, document_id=document_id, text=text, index=index, start=0, end=len(text),
                 source=source or f"/data/{document_id}.txt", page=page, metadata=metadata)


def word(i: int) -> str:
    """A distinct made-up word per ``i`` (no analyzer stems it onto another one)."""
    letters = "bcdfghjklmnpqrtvwxz"
    out = ""
    i += 1
    while i:
        i, r = divmod(i, len(letters))
        out += letters[r]
    return "qu" + out + "o"


def numbered_chunks(n: int, documents: int = 4) -> list:
    """``n`` chunks over ``documents`` documents; chunk ``i`` alone holds ``word(i)``."""
    return [
        make_chunk(f"c{i}", f"doc{i % documents}", f"common filler text about {word(i)} and more filler", index=i,
                   topic="even" if i % 2 == 0 else "odd", position=i)
        for i in range(n)
    ]
