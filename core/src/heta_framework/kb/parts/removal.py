"""Removing documents: what steps derived from them (their ``delete_documents``), then their raw copies
and catalog entries."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from heta_framework.contracts.documents import DocumentRecord
from heta_framework.errors import KnowledgeBaseError
from heta_framework.kb.parts.component_set import ComponentSet
from heta_framework.kb.parts.loaded_state import LoadedState
from heta_framework.runtime.step_context import StepContext, StepHost


class DocumentRemoval:
    def __init__(self, host: StepHost, steps: Sequence[Any], loaded: LoadedState, components: ComponentSet):
        self._host = host  # what the steps' delete_documents see as context.knowledge_base
        self._steps = steps
        self._loaded = loaded
        self._components = components

    def check_known(self, ids: list[str]) -> list[str]:
        unknown = [d for d in ids if d not in self._loaded.catalog]
        if unknown:
            raise KnowledgeBaseError(f"Unknown document id(s): {', '.join(map(repr, unknown))}. See kb.documents for the ids.")
        return ids

    async def delete_derived(self, document_ids: Sequence[str]) -> None:
        """Remove what steps derived from these documents (steps with ``delete_documents``)."""
        context = StepContext(knowledge_base=self._host, step_name="delete_documents", artifacts={}, run_id=0, document_ids=list(document_ids))
        for step in self._steps:
            deleter = getattr(step, "delete_documents", None)
            if deleter is not None:
                await deleter(context, list(document_ids))
        self._components.flush_stores()

    async def preview(self, document_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """What ``delete_derived`` would remove, per step that can tell (its optional ``preview_removal``); writes nothing."""
        context = StepContext(knowledge_base=self._host, step_name="preview_removal", artifacts={}, run_id=0, document_ids=list(document_ids))
        found: dict[str, dict[str, int]] = {}
        for step in self._steps:
            previewer = getattr(step, "preview_removal", None)
            if previewer is not None and (counts := dict(await previewer(context, list(document_ids)))):
                found[step.name] = counts
        return found

    async def remove(self, ids: list[str], *, remember: bool) -> list[DocumentRecord]:
        """Remove ``ids`` everywhere; ``remember``: a later build of the same unchanged file does not add it back."""
        await self.delete_derived(ids)
        loaded, objects = self._loaded, self._components.get("stores.objects")
        removed = []
        for doc_id in ids:
            record = loaded.catalog.pop(doc_id)
            objects.delete(record.raw_key)
            if remember:
                # its own access list goes with it (None: the recipe's default), so a listing of removed documents
                # can still tell who may know of it
                loaded.removed[doc_id] = {"source": record.source, "content_hash": record.content_hash, "removed": time.time(),
                                          "access": None if record.access is None else list(record.access)}
            removed.append(record)
        loaded.save_catalog()
        loaded.save_removed()
        return removed
