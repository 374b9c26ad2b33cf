"""The one name normalisation used everywhere: extraction, dedup, SQL joins and search.

Two spellings are the same name when they agree after Unicode NFKC (full-width
"ＯｐｅｎＡＩ" becomes "OpenAI"), case folding ("Straße" ~ "strasse") and
whitespace collapsing. Surrounding quotes and punctuation are dropped because
language models and noun-phrase heuristics both leave them on.
"""

from __future__ import annotations

import hashlib
import unicodedata

_EDGE_PUNCTUATION = " \t\r\n\"'`“”‘’«»「」『』《》()[]{}<>.,;:!?，。；：！？、"


def normalize_name(name: str) -> str:
    text = unicodedata.normalize("NFKC", name).casefold()
    text = " ".join(text.split())
    return text.strip(_EDGE_PUNCTUATION)


def normalize_type(type_name: str) -> str:
    """Types compare like names, with inner spaces as underscores (``"Person "`` ~ ``"person"``)."""
    return normalize_name(type_name).replace(" ", "_") or "concept"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:20]


def entity_id(name: str, type_name: str) -> str:
    """Stable id of an entity: the same normalised name and type give the same id in every build."""
    return "e" + _digest(normalize_name(name), normalize_type(type_name))


def relation_id(source_id: str, target_id: str, type_name: str) -> str:
    return "r" + _digest(source_id, target_id, normalize_type(type_name))
