"""LightRAG's query keywords: the prompt, its JSON shape and the check of a model's answer.

LightRAG asks the model for two lists: ``high_level_keywords`` (the themes and
concepts a question is about, matched against relations) and
``low_level_keywords`` (the specific names and terms in it, matched against
entities). The prompt here is Heta's own wording of that task.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from heta_framework.common.models import Message

PROMPT_VERSION = "heta-lightrag-keywords-v1"
MAX_KEYWORDS = 12  # per level: more is noise in one embedded string
MAX_KEYWORD_CHARS = 200

KEYWORD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "high_level_keywords": {"type": "array", "items": {"type": "string"}},
        "low_level_keywords": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["high_level_keywords", "low_level_keywords"],
    "additionalProperties": False,
}

SYSTEM_PROMPT = (
    "You pick search keywords out of a user's question for a knowledge-graph retriever. Answer with JSON only: "
    '{"high_level_keywords": [...], "low_level_keywords": [...]}. '
    "high_level_keywords: the broad themes, concepts or kinds of relationship the question is about. "
    "low_level_keywords: the specific entities in it: proper names, products, places, technical terms, exact details. "
    "Use the question's own language and words where possible; at most 8 keywords per list; "
    "a list may be empty when the question has nothing of that kind."
)


@attrs.frozen
class Keywords:
    """Both keyword lists of one query, and where they came from (``language_model``, ``cache`` or ``offline``)."""

    high_level: tuple[str, ...] = ()
    low_level: tuple[str, ...] = ()
    source: str = "offline"

    def to_metadata(self) -> dict[str, Any]:
        return {"high_level_keywords": list(self.high_level), "low_level_keywords": list(self.low_level), "source": self.source}


def keyword_messages(query: str) -> list[Message]:
    return [Message("system", SYSTEM_PROMPT), Message("user", f"Question:\n{query}")]


def retry_messages(query: str, answer: str, error: str) -> list[Message]:
    """The conversation again, with the invalid answer and what was wrong with it."""
    return [
        *keyword_messages(query),
        Message("assistant", answer[:2000]),
        Message("user", f"That answer was invalid: {error}. Answer again with JSON that follows the schema exactly."),
    ]


def validate_keywords(value: Any) -> str | None:
    """None when ``value`` is a usable answer, else what is wrong with it (sent back to the model)."""
    if not isinstance(value, Mapping):
        return "the answer must be a JSON object"
    extra = sorted(set(value) - set(KEYWORD_SCHEMA["properties"]))
    if extra:
        return f"unexpected keys {', '.join(map(repr, extra))}"
    for key in ("high_level_keywords", "low_level_keywords"):
        items = value.get(key)
        if not isinstance(items, list):
            return f"{key!r} must be a list of strings"
        if not all(isinstance(item, str) for item in items):
            return f"every item of {key!r} must be a string"
    if not clean(value["high_level_keywords"]) and not clean(value["low_level_keywords"]):
        return "both lists are empty; give at least one keyword"
    return None


def clean(items: Sequence[str]) -> tuple[str, ...]:
    """Trimmed, single-spaced, non-empty, each once (ignoring case), at most ``MAX_KEYWORDS``."""
    seen: set[str] = set()
    kept: list[str] = []
    for item in items:
        text = " ".join(str(item).split())[:MAX_KEYWORD_CHARS]
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            kept.append(text)
    return tuple(kept[:MAX_KEYWORDS])


def keywords_from_answer(value: Mapping[str, Any], source: str) -> Keywords:
    return Keywords(clean(value["high_level_keywords"]), clean(value["low_level_keywords"]), source)
