"""``IndexFullText``: chunk text into the ``stores.text`` index; unlocks ``full_text_search``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from heta_framework.common.validators import positive_whole_number
from heta_framework.kb.documents import iter_chunks
from heta_framework.kb.search import SearchAsset
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, store_ref
from heta_framework.kb.stores import ObjectStoreProtocol, TextIndexStore

ASSET_KIND = "chunk_full_text_index"
ASSET_NAME = "chunks"
ASSET_STORE = "stores.text"


def full_text_asset(backend: str | None, analyzer: str | None) -> SearchAsset:
    return SearchAsset(kind=ASSET_KIND, name=ASSET_NAME, store=ASSET_STORE, metadata={"backend": backend, "analyzer": analyzer})



@attrs.frozen
class IndexFullText:
    """Write every chunk of the run into ``stores.text``, one commit per ``batch_size`` chunks.

    Each commit becomes one index segment, and Whoosh answers queries about a
    third slower over four segments than over one, hence large batches.

    The analyzer is the text store's (``[stores.text] analyzer = "chinese"``);
    the search asset records it and the backend, so queries use what the index
    was built with.
    """

    name: ClassVar[str] = "index_full_text"

    batch_size: int = attrs.field(default=20_000, validator=positive_whole_number)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(
            components=frozenset({store_ref("text"), store_ref("objects")}),
            artifacts=frozenset({"chunk_keys"}),
        )

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(
            artifacts=frozenset({ASSET_KIND}),
            queries=frozenset({"full_text_search"}),
            # which backend and analyzer built the index is known once the store is open: run() describes it
            search_assets=(full_text_asset(None, None),),
        )

    async def run(self, context: StepContextProtocol) -> None:
        store: TextIndexStore = context.store("text")
        objects: ObjectStoreProtocol = context.store("objects")
        context.describe_asset(ASSET_KIND, ASSET_NAME, {"backend": store.backend, "analyzer": store.analyzer})
        chunk_keys = context.get_artifact("chunk_keys")
        progress = context.progress("index full text", len(chunk_keys))
        batch = []
        written = 0
        try:
            for key in chunk_keys:
                # chunk by chunk, so one huge document is cut into batches like many small ones:
                # a commit's cost grows faster than its size
                for chunk in iter_chunks(objects, [key]):
                    batch.append(chunk)
                    if len(batch) >= self.batch_size:
                        written += await asyncio.to_thread(store.upsert, batch)
                        batch = []
                progress.advance()
            if batch:
                written += await asyncio.to_thread(store.upsert, batch)
        finally:
            progress.close()
        context.count("chunks_indexed", written)
        context.set_artifact(
            ASSET_KIND,
            {"paths": store.relative_paths(), "chunks": written, "backend": store.backend, "analyzer": store.analyzer},
        )

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        index = artifacts.get(ASSET_KIND, {})
        return StepCleanupPlan(paths=tuple(index.get("paths", ())), description="full-text index folder")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        store: TextIndexStore = context.store("text")
        await asyncio.to_thread(store.delete_documents, document_ids)
