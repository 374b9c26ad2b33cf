"""``IndexTitles``: the build step that writes the title index and publishes it as a search asset."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from heta_framework.kb.documents import document_key, iter_chunks
from heta_framework.kb.search import SearchAsset
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, store_ref

from heta_plugin_example.titles import group_by_document, title_entries

INDEX_PREFIX = "title_index/"

#: what the step publishes and ``title_search`` requires; ``metadata`` tells the engine where to read
TITLE_INDEX_ASSET = SearchAsset(
    kind="title_index",
    name="titles",
    store="stores.objects",
    metadata={"prefix": INDEX_PREFIX, "format": 1},
)


def index_key(document_id: str) -> str:
    # One object per document: an incremental build only rewrites the documents it processed,
    # and deleting a document deletes exactly one object.
    return f"{INDEX_PREFIX}{document_key(document_id)}.json"


def _heading_level(instance: Any, attribute: attrs.Attribute, value: int) -> None:
    if not 1 <= value <= 6:
        raise ValueError(f"max_heading_level must be between 1 and 6 (Markdown heading levels), got {value}")


@attrs.frozen
class IndexTitles:
    """Index each document's title and Markdown headings (down to ``max_heading_level``).

    Recipe: ``[[steps]] step = "index_titles"`` after ``split_documents``;
    option ``max_heading_level`` (default 3). Unlocks ``title_search``.
    """

    name: ClassVar[str] = "index_titles"

    max_heading_level: int = attrs.field(default=3, validator=_heading_level)

    @property
    def requirements(self) -> StepRequirements:
        # Declared, so a recipe without split_documents is rejected before any step runs.
        return StepRequirements(components=frozenset({store_ref("objects")}), artifacts=frozenset({"chunk_keys"}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(
            artifacts=frozenset({"title_index"}),
            queries=frozenset({"title_search"}),
            search_assets=(TITLE_INDEX_ASSET,),
        )

    async def run(self, context: StepContextProtocol) -> None:
        objects = context.store("objects")  # typed: ObjectStoreProtocol
        chunk_keys = context.get_artifact("chunk_keys")
        # Reading and writing JSON files is blocking I/O: keep it off the event loop.
        summary = await asyncio.to_thread(self._index, objects, chunk_keys)
        context.set_artifact("title_index", summary)

    def _index(self, objects: Any, chunk_keys: list[str]) -> dict[str, int]:
        documents = entries = 0
        for document_id, chunks in group_by_document(iter_chunks(objects, chunk_keys)).items():
            document_entries = title_entries(chunks, self.max_heading_level)
            objects.put_json(index_key(document_id), {"document_id": document_id, "entries": document_entries})
            documents += 1
            entries += len(document_entries)
        return {"documents": documents, "entries": entries}

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/title_index",), description="title and heading index")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        """Called by ``kb.delete_documents()`` and before a changed document is rebuilt."""
        objects = context.store("objects")  # typed: ObjectStoreProtocol
        for document_id in document_ids:
            objects.delete(index_key(document_id))
