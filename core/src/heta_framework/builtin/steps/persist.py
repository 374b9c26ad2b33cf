"""``PersistChunks``: chunk text into the SQL store; unlocks ``sql_text_search``."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from heta_framework.common.validators import whole_number
from heta_framework.contracts.components import store_ref
from heta_framework.contracts.documents import iter_chunks
from heta_framework.contracts.search import SearchAsset
from heta_framework.contracts.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements
from heta_framework.contracts.stores import ObjectStoreProtocol, SQLStore

CHUNK_TEXT_ASSET = SearchAsset(kind="chunk_text_index", name="chunks", store="stores.sql", metadata={"table": "chunks"})


@attrs.frozen
class PersistChunks:
    """Write every chunk of the run into ``stores.sql`` (upsert, one transaction per batch)."""

    name: ClassVar[str] = "persist_chunks"

    batch_size: int = attrs.field(default=2000, validator=whole_number(1))

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(
            components=frozenset({store_ref("sql"), store_ref("objects")}),
            artifacts=frozenset({"chunk_keys"}),
        )

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(
            artifacts=frozenset({"chunk_text_index"}),
            queries=frozenset({"sql_text_search"}),
            search_assets=(CHUNK_TEXT_ASSET,),
        )

    async def run(self, context: StepContextProtocol) -> None:
        store: SQLStore = context.store("sql")
        objects: ObjectStoreProtocol = context.store("objects")
        batch = []
        written = 0
        for chunk in iter_chunks(objects, context.get_artifact("chunk_keys")):
            batch.append(chunk)
            if len(batch) >= self.batch_size:
                written += await asyncio.to_thread(store.upsert_chunks, batch)
                batch = []
        if batch:
            written += await asyncio.to_thread(store.upsert_chunks, batch)
        context.count("chunks_persisted", written)
        context.set_artifact("chunk_text_index", {"paths": store.relative_paths(), "chunks": written})

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        index = artifacts.get("chunk_text_index", {})
        return StepCleanupPlan(paths=tuple(index.get("paths", ())), description="SQLite chunk table")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        store: SQLStore = context.store("sql")
        await asyncio.to_thread(store.delete_documents, document_ids)
