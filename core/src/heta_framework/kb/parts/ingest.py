"""Taking documents in: copy new and changed documents into the object store and the catalog, and report
what was skipped, refused, deduplicated or pruned (the build report's ``ingest``)."""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from heta_framework.contracts.access import AccessPolicy
from heta_framework.contracts.documents import DocumentRecord, SourceDocument, content_hash, document_key
from heta_framework.contracts.record import StepReport
from heta_framework.contracts.steps import IssueResolution, IssueSubject, StepIssue
from heta_framework.kb.parts.component_set import ComponentSet
from heta_framework.kb.parts.loaded_state import LoadedState
from heta_framework.kb.parts.removal import DocumentRemoval
from heta_framework.runtime.sources import SourceItem, SourceWalk, raw_suffix

INGEST_STEP = "ingest_sources"
RAW_PREFIX = "raw/"


async def ingest(
    sources: list[Path | str | SourceDocument],
    *,
    loaded: LoadedState,
    components: ComponentSet,
    removal: DocumentRemoval,
    prune: bool,
    force: bool,
    access: tuple[str, ...] | None,
    policy: AccessPolicy,
) -> StepReport:
    """Copy new and changed documents in; report what was skipped, refused, deduplicated or pruned.

    ``access`` (``heta build --access``) is the access list of every document of this build; without it a
    document takes its ``SourceDocument``/sidecar list, else the first matching recipe rule, else keeps the
    list it had (a plain rebuild never makes a document more public), else the recipe's default.
    """
    started = time.perf_counter()
    issues: list[StepIssue] = []
    stats: Counter[str] = Counter()
    catalog, objects = loaded.catalog, components.get("stores.objects")

    def issue(code: str, subject: tuple[str, str], message: str, *, severity: str = "info", outcome: str = "") -> None:
        resolution = IssueResolution(action="skipped_document", outcome=outcome) if outcome else None
        issues.append(StepIssue(INGEST_STEP, IssueSubject(*subject), code, severity, message, resolution))

    walk = SourceWalk(sources)
    changed: list[str] = []
    now = time.time()
    file_by_content = {r.content_hash: r.id for r in catalog.values() if r.from_file}
    for item in walk:
        digest = content_hash(item.data)
        existing = catalog.get(item.id)
        readers = document_access(item, access, policy, existing)
        if existing is not None and existing.content_hash == digest:
            if item.modified is not None and existing.modified != item.modified:
                catalog[item.id] = existing = attrs.evolve(existing, modified=item.modified)
            if existing.access != readers:  # the catalog alone says who reads: nothing is embedded again
                catalog[item.id] = attrs.evolve(existing, access=readers)
                stats["documents_access_changed"] += 1
            stats["documents_unchanged"] += 1
            continue
        removed = loaded.removed.get(item.id)
        if removed is not None and removed.get("content_hash") == digest and not force:
            issue(
                "document_previously_removed", ("document", item.id),
                f"{item.source} was removed (heta remove) and has not changed since; not added again "
                "(`heta build --force` adds it back).",
                outcome="Build with --force (in Python: build(..., force=True)) to add it back, or change the file.",
            )
            stats["documents_previously_removed"] += 1
            continue
        twin_id = file_by_content.get(digest) if existing is None and item.modified is not None else None
        twin = catalog.get(twin_id) if twin_id else None
        if twin is not None and os.path.exists(twin.source):
            issue(
                "duplicate_document_content", ("document", item.id),
                f"{item.source} has the same content as {twin.source} (document {twin.id}); indexed once, as {twin.id}.",
                outcome="One document for both paths.",
            )
            stats["documents_duplicate_content"] += 1
            continue
        if existing is not None:
            changed.append(item.id)
        raw_key = f"{RAW_PREFIX}{document_key(item.id)}{raw_suffix(item.name)}"
        if existing is not None and existing.raw_key != raw_key:
            objects.delete(existing.raw_key)
        objects.put_bytes(raw_key, item.data)
        loaded.removed.pop(item.id, None)
        catalog[item.id] = DocumentRecord(
            id=item.id, source=item.source, name=item.name, content_hash=digest, size=len(item.data), raw_key=raw_key,
            metadata=item.metadata, modified=item.modified, added=existing.added if existing else now, updated=now, access=readers,
        )
        if item.modified is not None:
            file_by_content[digest] = item.id
        stats["documents_changed" if existing is not None else "documents_added"] += 1
    for skipped in walk.skipped:
        issues.append(StepIssue(INGEST_STEP, IssueSubject("path", skipped.path), skipped.code, skipped.severity, skipped.message,
                                IssueResolution(action="skipped_file", outcome="Not read.")))
        stats["paths_skipped"] += 1
    if changed:
        await removal.delete_derived(changed)
    components.flush_stores()  # raw copies are durable before the catalog names them
    loaded.save_catalog()
    loaded.save_removed()
    if prune:
        gone = vanished_documents(catalog.values(), walk.folders)
        for doc_id in gone:
            issue("document_pruned", ("document", doc_id), f"{catalog[doc_id].source} no longer exists; its document was removed.")
        if gone:
            await removal.remove(gone, remember=False)
        stats["documents_pruned"] = len(gone)
    return StepReport("ingest", INGEST_STEP, "done", time.perf_counter() - started, tuple(issues), dict(stats))


def document_access(
    item: SourceItem, access: tuple[str, ...] | None, policy: AccessPolicy, existing: DocumentRecord | None,
) -> tuple[str, ...] | None:
    """The access list a document takes in from this build (``ingest``'s order)."""
    if access is not None:
        return access
    if item.access is not None:
        return item.access
    ruled = policy.for_source(item.source)
    if ruled is not None:
        return ruled
    return existing.access if existing is not None else None


def vanished_documents(records: Iterable[DocumentRecord], folders: Sequence[Path]) -> list[str]:
    """File documents under ``folders`` whose file is gone (an unreadable file is not gone)."""
    gone = []
    for record in records:
        if not record.from_file:
            continue
        source = Path(record.source)
        if any(source.is_relative_to(folder) for folder in folders) and not os.path.lexists(source):
            gone.append(record.id)
    return sorted(gone)
