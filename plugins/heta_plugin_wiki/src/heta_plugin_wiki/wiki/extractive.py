"""A page written from the document's own sentences, no model: the first sentences as the summary, its headings
or paragraphs (or runs of sentences) as sections, its capitalised names as key entities."""

from __future__ import annotations

import re
from collections import Counter

from heta_plugin_wiki.wiki.persist import Section

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.MULTILINE)
_NAME = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|the|de|von|van)?\s*[A-Z][\w'’-]*)*")
#: capitalised words that start sentences and name nothing
_COMMON = frozenset("The A An In On At It This That These Those He She They We I Our Its Their There Here When Where What "
                    "Who Why How And But Or If For From With By As To Of After Before During Each Every Some Many Most".split())

SUMMARY_SENTENCES = 2
SECTION_SENTENCES = 3
MAX_SECTIONS = 8
MAX_ENTITIES = 10


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(" ".join(text.split())) if s.strip()]


def join(parts: list[str]) -> str:
    """Sentences back into text: a space after Latin punctuation, none after CJK's."""
    text = ""
    for part in parts:
        text += part if not text or text[-1] in "。！？" else " " + part
    return text


def title_of(text: str, name: str) -> str:
    heading = _HEADING.search(text)
    if heading:
        return heading.group(1).strip()
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0].replace("_", " ").replace("-", " ").strip()
    return stem[:1].upper() + stem[1:] if stem else (sentences(text)[:1] or ["Untitled"])[0][:80]


def summary_of(text: str) -> str:
    body = _HEADING.sub("", text)
    return join(sentences(body)[:SUMMARY_SENTENCES])[:600]


def sections_of(text: str) -> tuple[Section, ...]:
    """Headed parts when the text has markdown headings, else paragraphs, else runs of sentences."""
    headings = list(_HEADING.finditer(text))
    if headings:
        parts = [(m.group(1).strip(), text[m.end(): headings[i + 1].start() if i + 1 < len(headings) else len(text)])
                 for i, m in enumerate(headings)]
        found = [Section(h, " ".join(body.split())) for h, body in parts if body.strip()]
        return tuple(found[:MAX_SECTIONS])
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    if len(paragraphs) < 2:
        said = sentences(text)
        paragraphs = [join(said[i: i + SECTION_SENTENCES]) for i in range(0, len(said), SECTION_SENTENCES)]
    if len(paragraphs) > MAX_SECTIONS:  # fold the tail in: a page keeps all its text, in at most MAX_SECTIONS parts
        paragraphs = [*paragraphs[: MAX_SECTIONS - 1], " ".join(paragraphs[MAX_SECTIONS - 1:])]
    return tuple(Section(_heading_for(p), p) for p in paragraphs)


def _heading_for(paragraph: str) -> str:
    names = entities_of(paragraph, limit=2)
    if names:
        return ", ".join(names)
    words = paragraph.split()
    return " ".join(words[:6]) + ("…" if len(words) > 6 else "")


def entities_of(text: str, limit: int = MAX_ENTITIES) -> tuple[str, ...]:
    """Capitalised names, most frequent first. A lone capitalised word at a sentence's start names something only if
    it is capitalised elsewhere too ("Coral reefs ..." is not a name; "Berlin" mid-sentence is)."""
    counts: Counter[str] = Counter()
    elsewhere: set[str] = set()
    starts: Counter[str] = Counter()
    flat = " ".join(text.split())
    for match in _NAME.finditer(flat):
        name = match.group(0).strip()
        if name.startswith("The "):
            name = name[4:]
        words = name.split()
        if not words or (len(words) == 1 and (name in _COMMON or len(name) < 3)):
            continue
        at_start = not flat[: match.start()].rstrip() or flat[: match.start()].rstrip()[-1] in ".!?"
        if len(words) == 1 and at_start and not match.group(0).startswith("The "):
            starts[name] += 1
            continue
        elsewhere.add(name)
        counts[name] += 1
    for name, amount in starts.items():
        if name in elsewhere:
            counts[name] += amount
    return tuple(name for name, _ in sorted(counts.items(), key=lambda item: (-item[1], -len(item[0]), item[0]))[:limit])
