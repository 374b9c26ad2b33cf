"""A small real knowledge base for integration tests: four short documents, core's SQL recipe.

Framework integrations (LangChain, LlamaIndex, Haystack, ...) need the same fixture: a
built folder they open as a user would. ``build_sample_kb(path)`` makes it with the
installed plugins (entry points), so a test can also pass a recipe with vector steps.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: document id -> (topic metadata, text)
SAMPLE_TEXTS: dict[str, tuple[str, str]] = {
    "fleming": ("medicine", "Penicillin was discovered by Alexander Fleming in 1928, when a mould killed the bacteria on a culture plate."),
    "whales": ("ocean", "Humpback whales sing long songs that carry across the ocean; penicillin plays no part in their lives."),
    "steam": ("engineering", "A steam engine burns coal to boil water, and the steam pushes a piston back and forth."),
    "coral": ("ocean", "Coral reefs are built by tiny animals and shelter a quarter of all the fish in the ocean."),
}
#: parse, split, persist chunks: ``sql_text_search`` with heta-core alone
SQL_RECIPE: dict[str, Any] = {"steps": [{"step": "parse_documents"}, {"step": "split_documents"}, {"step": "persist_chunks"}]}


def build_sample_kb(path: Path, recipe: Mapping[str, Any] = SQL_RECIPE) -> Path:
    """Build ``SAMPLE_TEXTS`` into a new knowledge base at ``path`` with ``recipe`` (a recipe dict), close it, return ``path``."""
    from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
    from heta_framework.plugins.registry import PluginRegistry

    registry = PluginRegistry.from_entry_points(strict=True)
    kb = KnowledgeBase.create(path, Recipe.from_dict(dict(recipe), registry), registry=registry)
    documents = [SourceDocument(text=text, id=doc_id, metadata={"topic": topic}) for doc_id, (topic, text) in SAMPLE_TEXTS.items()]
    with kb:
        kb.sync.build(documents)
    return path


def restrict_sample_document(path: Path, document_id: str = "fleming", principals: tuple[str, ...] = ("group:medicine",)) -> Path:
    """Give one document of a built sample knowledge base an access list (``kb.set_access``); return ``path``."""
    from heta_framework.kb import KnowledgeBase

    with KnowledgeBase.load(path) as kb:
        kb.set_access([document_id], list(principals))
    return path
