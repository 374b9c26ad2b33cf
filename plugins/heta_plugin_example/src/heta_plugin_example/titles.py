"""Titles and headings of a document's chunks, and how the words of a query match them.

Pure functions over ``Chunk``s and plain data: the step and the engine stay thin,
and this is where the behaviour is tested.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import Any

from heta_framework.kb.documents import Chunk, chunk_to_dict

#: a Markdown ATX heading: ``## Feeding habits ##``
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)
_MARKDOWN_SUFFIXES = (".md", ".markdown")
_EMPHASIS = re.compile(r"[*_`]+")
# CJK text has no spaces: each character is a word of its own, so "上海" matches the title "上海市".
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+", re.UNICODE)

# Question words would otherwise match every heading that happens to contain them.
STOP_WORDS = frozenset(
    "a an and are as at be by did do does for from how in is it of on or the to was what when where which who why with".split()
)

#: a title hit is worth a little more than a heading hit with the same words
HEADING_WEIGHT = 0.8


def fold(word: str) -> str:
    """Lower-case and drop a plural ending, so "whales" matches the title "Whale"."""
    word = word.casefold()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def words(text: str) -> frozenset[str]:
    """Every folded word of ``text``."""
    return frozenset(fold(w) for w in _WORD.findall(text))


def query_words(text: str) -> frozenset[str]:
    """The words of a query that count: stop words dropped, unless nothing else is left."""
    every = words(text)
    return (every - STOP_WORDS) or every


def score(query: frozenset[str], entry_words: frozenset[str], kind: str) -> float:
    """How well an entry matches: the share of query words it has, then (a little) how little else it has.

    ``"whale"`` scores "Whale" above "Whale watching": both cover the query, the first says nothing else.
    """
    matched = query & entry_words
    if not matched or not query:
        return 0.0
    coverage = len(matched) / len(query)
    focus = len(matched) / len(entry_words)
    weight = 1.0 if kind == "title" else HEADING_WEIGHT
    return round(weight * (coverage + 0.1 * focus), 6)


def _clean_heading(text: str) -> str:
    return _EMPHASIS.sub("", text).strip()


def _name_title(chunk: Chunk) -> str:
    """``penicillin-notes.docx`` -> ``penicillin notes``: the last resort when a document has no title."""
    name = chunk.metadata.get("name") or PurePath(chunk.source).name or chunk.document_id
    return re.sub(r"[-_.]+", " ", PurePath(name).stem).strip()


def _is_markdown(chunk: Chunk) -> bool:
    name = str(chunk.metadata.get("name") or chunk.source).lower()
    return name.endswith(_MARKDOWN_SUFFIXES)


def _headings(chunks: Sequence[Chunk], max_level: int) -> list[tuple[int, str, Chunk]]:
    """(level, text, chunk) per heading, in document order.

    Chunks overlap, so one heading can appear in two chunks: it is kept in the
    chunk where it sits nearest the start, which is the chunk holding its section.
    """
    best: dict[int, tuple[int, int, str, Chunk]] = {}  # absolute offset -> (offset in chunk, level, text, chunk)
    for chunk in chunks:
        if not _is_markdown(chunk):
            continue
        for match in _HEADING.finditer(chunk.text):
            level = len(match.group(1))
            text = _clean_heading(match.group(2))
            if level > max_level or not text:
                continue
            absolute = chunk.start + match.start()
            if absolute not in best or match.start() < best[absolute][0]:
                best[absolute] = (match.start(), level, text, chunk)
    return [(level, text, chunk) for _, (_, level, text, chunk) in sorted(best.items())]


def _entry(kind: str, text: str, level: int, title: str, chunk: Chunk) -> dict[str, Any]:
    return {"kind": kind, "text": text, "level": level, "title": title, "chunk": chunk_to_dict(chunk)}


def entry_words(entry: Mapping[str, Any]) -> frozenset[str]:
    """The words an entry answers to. A heading is read under its document's title,
    so "whale migration" finds the "Migration" section of "Whale" before the title alone."""
    if entry["kind"] == "heading":
        return words(entry["text"]) | words(entry["title"])
    return words(entry["text"])


def title_entries(chunks: Sequence[Chunk], max_heading_level: int = 3) -> list[dict[str, Any]]:
    """The index entries of one document: its title, then its headings.

    The title is, in order of preference: the parser's ``title`` (HTML ``<title>``),
    the first level-1 Markdown heading, the file name. Each entry keeps the
    chunk it points to, so a hit carries that chunk's text and provenance.
    """
    if not chunks:
        return []
    chunks = sorted(chunks, key=lambda c: c.index)
    headings = _headings(chunks, max_heading_level)
    first_h1 = next((h for h in headings if h[0] == 1), None)
    parser_title = str(chunks[0].metadata.get("title") or "").strip()
    if parser_title:
        title, title_chunk = parser_title, chunks[0]
    elif first_h1 is not None:
        (_, title, title_chunk) = first_h1
        headings = [h for h in headings if h is not first_h1]
    else:
        title, title_chunk = _name_title(chunks[0]), chunks[0]
    entries = [_entry("title", title, 0, title, title_chunk)]
    entries += [_entry("heading", text, level, title, chunk) for level, text, chunk in headings]
    return entries


def matches_filters(metadata: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    """Exact metadata match, as in the core modes; a list value means any of its items."""
    for key, wanted in filters.items():
        value = metadata.get(key)
        if isinstance(wanted, (list, tuple, set, frozenset)):
            if value not in wanted:
                return False
        elif value != wanted:
            return False
    return True


def group_by_document(chunks: Iterable[Chunk]) -> dict[str, list[Chunk]]:
    grouped: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        grouped.setdefault(chunk.document_id, []).append(chunk)
    return grouped
