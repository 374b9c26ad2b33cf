"""Deleting what the steps built (their cleanup plans) and compacting the folder so deleted text is gone."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.builtin.stores.folder_state import CATALOG_FILE, RECORD_FILE
from heta_framework.contracts.record import RunRecord
from heta_framework.errors import KnowledgeBaseError
from heta_framework.kb.parts.component_set import RECIPE_FILE
from heta_framework.kb.parts.ingest import RAW_PREFIX
from heta_framework.kb.parts.loaded_state import LoadedState
from heta_framework.runtime.compact import CompactHost, CompactReport, compact_knowledge_base


@attrs.frozen
class DeletePlan:
    """What ``delete()`` removes (or would remove, with ``dry_run=True``), relative to the folder."""

    paths: tuple[str, ...]
    kept: tuple[str, ...]
    deleted: bool


class Maintenance:
    def __init__(self, host: CompactHost, steps: Sequence[Any], *, path: Path, loaded: LoadedState, close: Callable[[], None]):
        self._host = host
        self._steps = steps
        self._path = path
        self._loaded = loaded
        self._close = close  # every store and client of the knowledge base: files are about to go

    def cleanup_paths(self) -> list[str]:
        paths: list[str] = []
        step_artifacts = self._loaded.run_record.data.get("step_artifacts", {})
        for step in self._steps:
            plan = step.cleanup_plan(step_artifacts.get(step.name, {}))
            for path in plan.paths:
                if path.startswith(f"objects/{RAW_PREFIX}") or path.rstrip("/") in ("objects/raw", "objects"):
                    raise KnowledgeBaseError(f"Step {step.name!r} lists raw inputs ({path}) in its cleanup plan; raw inputs are never deleted.")
                if path not in paths:
                    paths.append(path)
        return paths

    def delete(self, *, dry_run: bool, wait: float | None) -> DeletePlan:
        loaded = self._loaded
        if dry_run:
            loaded.reload_if_changed()
            return self._delete_plan(deleted=False)
        with loaded.writer_sync("deleted", wait):
            plan = self._delete_plan(deleted=True)
            self._close()
            for relative in plan.paths:
                target = self._path / relative
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink(missing_ok=True)
            loaded.state.clear_run_record()
            loaded.run_record = RunRecord.open(loaded.state)
            loaded.catalog = {k: attrs.evolve(v, state="pending") for k, v in loaded.catalog.items()}
            loaded.save_catalog()
            return plan

    def _delete_plan(self, *, deleted: bool) -> DeletePlan:
        paths = self.cleanup_paths() + [RECORD_FILE]
        existing = tuple(p for p in paths if (self._path / p).exists())
        return DeletePlan(paths=existing, kept=(RECIPE_FILE, CATALOG_FILE, f"objects/{RAW_PREFIX}"), deleted=deleted)

    def compact(self, *, wait: float | None) -> CompactReport:
        with self._loaded.writer_sync("compacted", wait):
            return compact_knowledge_base(self._host)
