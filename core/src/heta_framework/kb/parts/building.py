"""A build under the writer lock: take the documents in, decide which run this is (new, resumed or
nothing to do), run the recipe's steps over the pending documents, and mark what got built."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.common import tracing
from heta_framework.common.usage import metering, usage_attributes
from heta_framework.contracts.access import AccessPolicy
from heta_framework.contracts.documents import SourceDocument
from heta_framework.contracts.progress import ProgressFactory
from heta_framework.contracts.record import BuildReport, StepReport, issue_to_dict
from heta_framework.contracts.steps import IssueSubject, StepIssue
from heta_framework.kb.parts.component_set import ComponentSet
from heta_framework.kb.parts.ingest import INGEST_STEP, ingest
from heta_framework.kb.parts.loaded_state import LoadedState
from heta_framework.kb.parts.removal import DocumentRemoval
from heta_framework.runtime.runner import BuildHost, documents_to_retry, run_steps, step_key


class Builder:
    def __init__(
        self,
        host: BuildHost,
        steps: Sequence[Any],
        *,
        loaded: LoadedState,
        components: ComponentSet,
        removal: DocumentRemoval,
        check_recipe: Callable[[], None],
    ):
        self._host = host  # what the steps see as context.knowledge_base
        self._steps = steps
        self._loaded = loaded
        self._components = components
        self._removal = removal
        self._check_recipe = check_recipe

    async def build(
        self, sources: list[Path | str | SourceDocument], *, rebuild: bool, prune: bool, force: bool, wait: float | None,
        progress: ProgressFactory, access: tuple[str, ...] | None, policy: AccessPolicy,
    ) -> BuildReport:
        loaded = self._loaded
        with tracing.span("heta.build", {"heta.kb": self._host.path.name, "heta.build.rebuild": rebuild}) as span, metering() as meter:
            async with loaded.writer("built", wait) as lock:
                self._check_recipe()
                report = await ingest(sources, loaded=loaded, components=self._components, removal=self._removal, prune=prune, force=force,
                                      access=access, policy=policy)
                if lock.stale_holder:
                    report = attrs.evolve(report, issues=(*report.issues, stale_lock_issue(lock.stale_holder)))
                built = await self._run(report, rebuild=rebuild, progress=progress)
            usage = meter.to_dict()
            tracing.set_attributes(span, {
                "heta.build.run": built.run_id, "heta.build.documents": built.document_count, "heta.build.steps": len(built.steps),
                "heta.build.issues": len(built.issues), **usage_attributes(usage),
            })
        return attrs.evolve(built, usage=usage)

    async def _run(self, ingest: StepReport, *, rebuild: bool, progress: ProgressFactory) -> BuildReport:
        loaded, record = self._loaded, self._loaded.run_record
        keys = [step_key(i, s) for i, s in enumerate(self._steps)]
        last = record.last_run
        last_done = next((r for r in reversed(record.runs) if r["status"] == "done"), None)
        # a recipe whose steps changed since the last finished run must run over every document;
        # steps skip per-document work they already did (caches, upserts), so this stays cheap
        if rebuild or (last_done is not None and list(last_done["steps"]) != keys):
            loaded.catalog = {k: attrs.evolve(v, state="pending") for k, v in loaded.catalog.items()}
        pending = sorted(k for k, v in loaded.catalog.items() if v.state == "pending")
        resumed = bool(last and last["status"] != "done" and sorted(last["document_ids"]) == pending and list(last["steps"]) == keys)
        if resumed:
            run = last
            run["status"] = "running"
        else:
            if last and last["status"] != "done":
                last["status"] = "superseded"
            if not pending:
                record.save()
                return BuildReport(run_id=last["id"] if last else 0, document_count=0, steps=(), ingest=ingest)
            run = record.start_run(pending, keys)
        run["ingest"] = {"issues": [issue_to_dict(i) for i in ingest.issues], "stats": dict(ingest.stats)}
        report = await run_steps(self._host, self._steps, run, resumed=resumed, progress=progress)
        retry = documents_to_retry(run)  # stay pending: the next plain build runs them again
        for doc_id in run["document_ids"]:
            if doc_id in loaded.catalog and doc_id not in retry:
                loaded.catalog[doc_id] = attrs.evolve(loaded.catalog[doc_id], state="built")
        loaded.save_catalog()
        run.update(status="done", finished=time.time())
        record.save()
        return attrs.evolve(report, ingest=ingest, executor=self._host.executor.counts())


def stale_lock_issue(holder: Mapping[str, Any]) -> StepIssue:
    return StepIssue(
        INGEST_STEP, IssueSubject("writer_lock", str(holder.get("pid", "?"))), "stale_writer_lock", "warning",
        f"The previous writer (PID {holder.get('pid')} on {holder.get('host')}) ended without releasing the writer lock "
        "(killed or crashed); this build took the lock over and resumes its work.",
    )
