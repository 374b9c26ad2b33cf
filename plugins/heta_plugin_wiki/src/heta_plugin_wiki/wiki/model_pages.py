"""A page written by the language model within a token budget, cached by its input: the same text, model, prompt and
budget never cost a second call (the knowledge base's ``wiki_pages`` cache, the way the embedding cache works)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from heta_framework.common.models import LanguageClient, Message

PROMPT_VERSION = "wiki-page-1"
CACHE_NAME = "wiki_pages"

SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "summary": {"type": "string"},
        "sections": {"type": "array", "items": {"type": "object", "properties": {
            "heading": {"type": "string"}, "text": {"type": "string"}}, "required": ["heading", "text"]}},
        "entities": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["title", "summary", "sections", "entities"],
}

PROMPT = (
    "Write a wiki page about the document below, from what it says only: a title, a summary of two or three "
    "sentences, sections (a heading and a paragraph each, in the document's order) and the key entities it names "
    "(people, places, organisations, things), as written in the document. Write in the document's language. Reply "
    'only with JSON: {"title": str, "summary": str, "sections": [{"heading": str, "text": str}], "entities": [str]}.'
)


def cache_key(model_name: str, text: str, max_input_chars: int, max_tokens: int) -> str:
    material = json.dumps([PROMPT_VERSION, model_name, max_input_chars, max_tokens, text], ensure_ascii=False)
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


async def ask_page(model: LanguageClient, text: str, name: str, max_input_chars: int, max_tokens: int) -> tuple[str, Any]:
    """The model's reply text and its usage, for ``valid_page`` to judge; the input is cut to ``max_input_chars``."""
    shown = text[:max_input_chars]
    messages = [Message("system", PROMPT), Message("user", f"Document: {name}\n\n{shown}")]
    completion = await model.complete(messages, json_schema=SCHEMA, max_tokens=max_tokens)
    return completion.text, completion


def valid_page(reply: str) -> dict[str, Any] | None:
    """The page the reply describes, or ``None`` when it is not the JSON asked for."""
    try:
        data = json.loads(reply)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    title, summary, sections, entities = (data.get(k) for k in ("title", "summary", "sections", "entities"))
    if not isinstance(title, str) or not title.strip() or not isinstance(summary, str) or not isinstance(sections, list):
        return None
    kept = [{"heading": s["heading"].strip(), "text": s["text"].strip()} for s in sections
            if isinstance(s, dict) and isinstance(s.get("heading"), str) and isinstance(s.get("text"), str) and s["text"].strip()]
    names = [e.strip() for e in entities if isinstance(e, str) and e.strip()] if isinstance(entities, list) else []
    if not kept:
        return None
    return {"title": title.strip(), "summary": summary.strip(), "sections": kept, "entities": list(dict.fromkeys(names))[:20]}
