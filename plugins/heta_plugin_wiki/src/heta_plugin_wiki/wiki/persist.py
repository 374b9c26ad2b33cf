"""Where the wiki lives: JSON objects in the knowledge base's object store, and the sections' vectors.

``wiki/pages/<document key>.json``  one page per document (``Page.to_json``), keeping its ``document_id``: a
                                     page is readable exactly when its document is
``wiki/index.json``                  document id -> {title, summary, entities, related, source_hash, origin}; the
                                     index page and the related-page links are rendered from it per caller
``wiki/sections.json``               every section as a searchable unit (``split_wiki_pages``)
vector collection ``wiki_sections``  the sections' vectors (``index_wiki_pages``), metadata with their text
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from heta_framework.kb.documents import document_key
from heta_framework.kb.search import SearchAsset

PREFIX = "wiki/"
INDEX_KEY = f"{PREFIX}index.json"
SECTIONS_KEY = f"{PREFIX}sections.json"
SECTION_COLLECTION = "wiki_sections"
PAGES_ARTIFACT = "wiki_pages"
SECTIONS_ARTIFACT = "wiki_sections"
VECTORS_ARTIFACT = "wiki_section_vectors"
FORMAT = 1

PAGES_ASSET = SearchAsset(kind="wiki_pages", name="default", store="stores.objects", metadata={"index": INDEX_KEY})
SECTIONS_ASSET = SearchAsset(kind="wiki_sections", name="default", store="stores.objects", metadata={"sections": SECTIONS_KEY})
VECTORS_ASSET = SearchAsset(kind="wiki_section_vectors", name="default", store="stores.vector",
                            metadata={"collection": SECTION_COLLECTION})


def page_key(document_id: str) -> str:
    return f"{PREFIX}pages/{document_key(document_id)}.json"


def page_id(document_id: str) -> str:
    return f"wiki:{document_id}"


def document_of_page(page: str) -> str:
    return page.removeprefix("wiki:")


@attrs.frozen
class Section:
    heading: str
    text: str


@attrs.frozen
class Page:
    document_id: str
    title: str
    summary: str
    sections: tuple[Section, ...]
    entities: tuple[str, ...]
    #: hash of what the page was written from (the parsed text and the writer's settings): unchanged, not rewritten
    source_hash: str
    #: "extractive" or "model"
    origin: str

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, **attrs.asdict(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Page:
        return cls(document_id=data["document_id"], title=data["title"], summary=data["summary"],
                   sections=tuple(Section(s["heading"], s["text"]) for s in data["sections"]),
                   entities=tuple(data["entities"]), source_hash=data["source_hash"], origin=data["origin"])


def load_index(objects: Any) -> dict[str, dict[str, Any]]:
    return dict(objects.get_json(INDEX_KEY)["pages"]) if objects.exists(INDEX_KEY) else {}


def save_index(objects: Any, pages: Mapping[str, Mapping[str, Any]]) -> None:
    objects.put_json(INDEX_KEY, {"format": FORMAT, "pages": dict(sorted(pages.items()))})


def load_page(objects: Any, document_id: str) -> Page | None:
    key = page_key(document_id)
    return Page.from_json(objects.get_json(key)) if objects.exists(key) else None


def save_page(objects: Any, page: Page) -> None:
    objects.put_json(page_key(page.document_id), page.to_json())


def load_sections(objects: Any) -> list[dict[str, Any]]:
    return list(objects.get_json(SECTIONS_KEY)["sections"]) if objects.exists(SECTIONS_KEY) else []


def save_sections(objects: Any, sections: list[dict[str, Any]]) -> None:
    objects.put_json(SECTIONS_KEY, {"format": FORMAT, "sections": sections})
