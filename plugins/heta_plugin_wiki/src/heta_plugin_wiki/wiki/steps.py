"""The wiki's build steps, in recipe order after ``split_documents`` (they read the parsed documents):

``build_wiki_pages``  a page per new or changed document (model or extractive), the index and the links between pages
``split_wiki_pages``  each page's summary and sections as searchable sections (``wiki_full_text_search``)
``index_wiki_pages``  the sections' vectors in the vector store (``wiki_vector_search``; with both, ``wiki_hybrid_search``)

The chunk steps of heta-plugin-vector embed the ``chunks`` collection only, so the sections get their own small index
step here; it embeds only sections whose text changed. Every step also runs on ``kb.delete_documents()``: a removed
document's page, sections and vectors go with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import numpy as np
from heta_framework.common.threads import in_thread
from heta_framework.common.validators import positive_whole_number
from heta_framework.kb.documents import ParsedDocument, content_hash, parsed_from_dict
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, model_ref, store_ref

from heta_plugin_wiki.wiki import extractive, model_pages, persist
from heta_plugin_wiki.wiki.links import related_pages
from heta_plugin_wiki.wiki.persist import Page, Section

EXTRACTIVE_WRITER = "extractive-1"
MODES_OF_SECTIONS = frozenset({"wiki_full_text_search"})
MODES_OF_VECTORS = frozenset({"wiki_vector_search", "wiki_hybrid_search"})


@attrs.frozen
class BuildWikiPages:
    """A wiki page per document: by the language model within ``max_tokens`` when the recipe has one, else extractive."""

    name: ClassVar[str] = "build_wiki_pages"

    #: the language model's name in the recipe (``None``: ``models.language`` if the recipe has one)
    model: str | None = None
    #: False: extractive pages even when the recipe has a language model
    use_language_model: bool = True
    #: characters of the document the model reads (the page of a longer one rests on its beginning)
    max_input_chars: int = attrs.field(default=12_000, validator=positive_whole_number)
    #: tokens the model may write per page
    max_tokens: int = attrs.field(default=800, validator=positive_whole_number)
    #: pages asked for at the same time
    concurrency: int = attrs.field(default=4, validator=positive_whole_number)

    @property
    def requirements(self) -> StepRequirements:
        components = {store_ref("objects")}
        if self.model is not None and self.use_language_model:
            components.add(model_ref("language", self.model))
        return StepRequirements(components=frozenset(components), artifacts=frozenset({"parsed_document_keys"}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({persist.PAGES_ARTIFACT}), search_assets=(persist.PAGES_ASSET,))

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/wiki",), description="wiki pages, their index and sections")

    def _model(self, context: Any) -> Any:
        key = model_ref("language", self.model).key
        return context.get_component(key) if self.use_language_model and context.has_component(key) else None

    def _writer(self, model: Any) -> str:
        if model is None:
            return EXTRACTIVE_WRITER
        return f"{model_pages.PROMPT_VERSION}:{model.model_name}:{self.max_input_chars}:{self.max_tokens}"

    async def run(self, context: StepContextProtocol) -> None:
        objects = context.store("objects")
        model = self._model(context)
        writer = self._writer(model)
        index = await in_thread(persist.load_index, objects)
        todo: list[tuple[ParsedDocument, str]] = []
        for key in context.get_artifact("parsed_document_keys"):
            parsed = parsed_from_dict(await in_thread(objects.get_json, key))
            source_hash = content_hash(f"{writer}\n{parsed.text}")
            if index.get(parsed.document_id, {}).get("source_hash") == source_hash and objects.exists(persist.page_key(parsed.document_id)):
                context.count("pages_unchanged")
                continue
            todo.append((parsed, source_hash))
        limit = asyncio.Semaphore(self.concurrency)  # model calls in flight at once, so a remote API is not flooded
        progress = context.progress("wiki pages", len(todo))

        async def write(parsed: ParsedDocument, source_hash: str) -> Page:
            async with limit:
                page = await self._page(context, model, parsed, source_hash)
            progress.advance(1)
            return page

        try:
            pages = await asyncio.gather(*(write(parsed, source_hash) for parsed, source_hash in todo))
        finally:
            progress.close()
        for page in pages:
            await in_thread(persist.save_page, objects, page)
            index[page.document_id] = {"title": page.title, "summary": page.summary, "entities": list(page.entities),
                                       "source_hash": page.source_hash, "origin": page.origin}
        context.count("pages_written", len(pages))
        await in_thread(_save_index_with_links, objects, index)
        context.set_artifact(persist.PAGES_ARTIFACT, {"pages": len(index), "written": [p.document_id for p in pages]})

    async def _page(self, context: Any, model: Any, parsed: ParsedDocument, source_hash: str) -> Page:
        name = context.document(parsed.document_id).name
        if model is not None:
            data = await self._ask(context, model, parsed, name)
            if data is not None:
                return Page(parsed.document_id, data["title"], data["summary"],
                            tuple(Section(s["heading"], s["text"]) for s in data["sections"]), tuple(data["entities"]), source_hash, "model")
            context.count("pages_extractive_fallback")
        return Page(parsed.document_id, extractive.title_of(parsed.text, name), extractive.summary_of(parsed.text),
                    extractive.sections_of(parsed.text), extractive.entities_of(parsed.text), source_hash, "extractive")

    async def _ask(self, context: Any, model: Any, parsed: ParsedDocument, name: str) -> dict[str, Any] | None:
        import json

        cache = context.cache(model_pages.CACHE_NAME)
        key = model_pages.cache_key(model.model_name, parsed.text, self.max_input_chars, self.max_tokens)
        cached = (await in_thread(cache.get_many, [key])).get(key)
        if cached is not None:
            context.count("llm_cache_hits")
            return model_pages.valid_page(cached.decode("utf-8"))
        try:
            reply, _usage = await model_pages.ask_page(model, parsed.text, name, self.max_input_chars, self.max_tokens)
        except Exception as exc:  # a lost model costs this page its prose, not the build: an extractive page stands in
            context.report("wiki_page_model_failed", f"The language model could not write the page ({type(exc).__name__}).",
                           subject=("document", parsed.document_id), action="wrote_extractive_page",
                           outcome="The page is extractive; the next build of a changed document asks again.")
            context.count("llm_calls")
            return None
        context.count("llm_calls")
        data = model_pages.valid_page(reply)
        if data is None:
            context.report("wiki_page_invalid_output", "The language model's page was not the JSON asked for.",
                           subject=("document", parsed.document_id), action="wrote_extractive_page",
                           outcome="The page is extractive.")
            return None
        await in_thread(cache.put_many, {key: json.dumps(data, ensure_ascii=False).encode("utf-8")})
        return data

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        objects = context.store("objects")
        index = await in_thread(persist.load_index, objects)
        for document_id in document_ids:
            await in_thread(objects.delete, persist.page_key(document_id))
            index.pop(document_id, None)
        await in_thread(_save_index_with_links, objects, index)


def _save_index_with_links(objects: Any, index: dict[str, dict[str, Any]]) -> None:
    links = related_pages(index)
    for document_id, entry in index.items():
        entry["related"] = links.get(document_id, [])
    persist.save_index(objects, index)


def sections_of_page(page: Page) -> list[dict[str, Any]]:
    """The page as searchable units: its summary, then each section, each headed by the page's title."""
    parts = [Section("Summary", page.summary), *page.sections] if page.summary else list(page.sections)
    units = []
    for number, section in enumerate(parts):
        text = f"{page.title}: {section.heading}\n{section.text}"
        units.append({"id": f"{persist.page_id(page.document_id)}#{number}", "document_id": page.document_id,
                      "page_id": persist.page_id(page.document_id), "title": page.title, "heading": section.heading,
                      "text": text, "text_hash": content_hash(text)})
    return units


@attrs.frozen
class SplitWikiPages:
    """Each page's summary and sections as searchable units, in ``wiki/sections.json``."""

    name: ClassVar[str] = "split_wiki_pages"

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=frozenset({store_ref("objects")}), artifacts=frozenset({persist.PAGES_ARTIFACT}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({persist.SECTIONS_ARTIFACT}), queries=MODES_OF_SECTIONS,
                                search_assets=(persist.SECTIONS_ASSET,))

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(description="the sections file sits in objects/wiki, which build_wiki_pages's plan removes")

    async def run(self, context: StepContextProtocol) -> None:
        objects = context.store("objects")
        written = set(context.get_artifact(persist.PAGES_ARTIFACT)["written"])
        await self._resplit(context, objects, written)

    async def _resplit(self, context: Any, objects: Any, rewrite: set[str]) -> None:
        index = await in_thread(persist.load_index, objects)
        before = await in_thread(persist.load_sections, objects)
        kept = [s for s in before if s["document_id"] in index and s["document_id"] not in rewrite]
        have = {s["document_id"] for s in kept}
        new = []
        for document_id in sorted(set(index) - have):  # rewritten pages, and any the file lacks (an interrupted build)
            page = await in_thread(persist.load_page, objects, document_id)
            if page is not None:
                new.extend(sections_of_page(page))
        sections = sorted([*kept, *new], key=lambda s: (s["document_id"], int(s["id"].rsplit("#", 1)[1])))
        await in_thread(persist.save_sections, objects, sections)
        context.count("sections_written", len(new))
        # the vector step removes these: a collection cannot list its ids, so the sections that went are named here
        removed = sorted({s["id"] for s in before} - {s["id"] for s in sections})
        context.set_artifact(persist.SECTIONS_ARTIFACT, {"sections": len(sections), "removed": removed})

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        await self._resplit(context, context.store("objects"), set())


@attrs.frozen
class IndexWikiPages:
    """The sections' vectors (``models.embedding``) in the vector store's ``wiki_sections`` collection; only sections
    whose text changed are embedded."""

    name: ClassVar[str] = "index_wiki_pages"

    batch_size: int = attrs.field(default=64, validator=positive_whole_number)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=frozenset({store_ref("objects"), store_ref("vector"), model_ref("embedding")}),
                                artifacts=frozenset({persist.SECTIONS_ARTIFACT}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({persist.VECTORS_ARTIFACT}), queries=MODES_OF_VECTORS,
                                search_assets=(persist.VECTORS_ASSET,))

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=tuple((artifacts.get(persist.VECTORS_ARTIFACT) or {}).get("paths", ())),
                               description="wiki section vectors")

    async def run(self, context: StepContextProtocol) -> None:
        await self._index(context)

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        store = context.store("vector")
        if store.has_collection(persist.SECTION_COLLECTION):
            await asyncio.to_thread(store.collection(persist.SECTION_COLLECTION).delete_where, {"document_id": list(document_ids)})

    async def _index(self, context: Any) -> None:
        objects, store, client = context.store("objects"), context.store("vector"), context.embedding_model()
        sections = await in_thread(persist.load_sections, objects)
        ids = [s["id"] for s in sections]
        collection = store.collection(persist.SECTION_COLLECTION, int(client.dimension)) if sections else None
        if collection is not None:
            written = await asyncio.to_thread(collection.get_metadata, ids)
            # compared with what the collection holds: an interrupted build leaves it behind the sections file
            changed = [s for s in sections if written.get(s["id"], {}).get("text_hash") != s["text_hash"]]
            for start in range(0, len(changed), self.batch_size):
                batch = changed[start: start + self.batch_size]
                vectors = np.asarray(await client.embed([s["text"] for s in batch]), dtype=np.float32)
                await asyncio.to_thread(collection.upsert, [s["id"] for s in batch], vectors, [_metadata(s) for s in batch])
            context.count("section_vectors_written", len(changed))
        removed = (context.get_artifact(persist.SECTIONS_ARTIFACT) or {}).get("removed", [])
        paths: tuple[str, ...] = ()
        if store.has_collection(persist.SECTION_COLLECTION):
            if removed:
                await asyncio.to_thread(store.collection(persist.SECTION_COLLECTION).delete, list(removed))
            paths = tuple(store.relative_paths(persist.SECTION_COLLECTION))
        context.set_artifact(persist.VECTORS_ARTIFACT, {"sections": len(ids), "paths": list(paths)})


def _metadata(section: Mapping[str, Any]) -> dict[str, Any]:
    return {k: section[k] for k in ("document_id", "page_id", "title", "heading", "text", "text_hash")}

