"""``KnowledgeBase``: create or load a knowledge-base folder, build it, query it, delete it.

Folder layout::

    recipe.toml        the recipe (no API key values)
    run_record.json    runs, step status, artifacts, issues, capabilities, search assets
    catalog.json       every document: id, source, content hash, state, file mtime and size
    removed.json       documents removed with delete_documents (a build does not bring them back)
    writer.lock        the writer lock (kb/lock.py): one build/remove/delete at a time, across processes

The run record, catalog, removed documents, caches and writer lock are the
knowledge base's state (``kb/state.py``): in the folder by default
(``kb/folder_state.py``), or on a server when the recipe says ``[stores.state]``.
    objects/raw/       raw inputs (never deleted by cleanup)
    objects/parsed/    objects/chunks/   step outputs
    ...                store files (chunks.sqlite, vectors/, text_index/, graph.sqlite)
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shutil
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from heta_framework.common.secrets import Secret
from heta_framework.errors import (
    HetaError,
    KnowledgeBaseBusyError,
    KnowledgeBaseError,
    RecipeError,
    RecipeValidationError,
    UnknownNameError,
)
from heta_framework.kb.committed_view import documents_being_built, hide_documents
from heta_framework.kb.compact import CompactReport, compact_knowledge_base
from heta_framework.kb.context import ProgressFactory, StepContext, no_progress
from heta_framework.kb.documents import DocumentRecord, ParserSet, SourceDocument, content_hash, document_key
from heta_framework.kb.folder_state import CATALOG_FILE, RECORD_FILE, REMOVED_FILE
from heta_framework.kb.query_memo import QueryMemo
from heta_framework.kb.query_options import check_options
from heta_framework.kb.recipe import KnowledgeModels, Recipe, expand_steps, validate_store_options
from heta_framework.kb.record import BuildReport, RunRecord, StepReport, issue_to_dict
from heta_framework.kb.runner import documents_to_retry, run_steps, step_key, validate_steps
from heta_framework.kb.search import (
    QueryContext,
    QueryEngineRegistry,
    QueryRequest,
    QueryResponse,
    SearchAsset,
    TraceNode,
    check_available,
    elapsed_ms,
)
from heta_framework.kb.sources import SourceWalk, check_given_documents, raw_suffix
from heta_framework.kb.state import KnowledgeBaseState, WriterLockProtocol
from heta_framework.kb.steps import IssueResolution, IssueSubject, StepIssue
from heta_framework.kb.sync import BackgroundLoop, SyncKnowledgeBase

if TYPE_CHECKING:
    from heta_framework.plugins.registry import PluginRegistry

log = logging.getLogger(__name__)

RECIPE_FILE = "recipe.toml"
STATE_SLOT = "state"
__all__ = ["CATALOG_FILE", "RECIPE_FILE", "RECORD_FILE", "REMOVED_FILE", "DeletePlan", "KnowledgeBase"]
INGEST_STEP = "ingest_sources"
RAW_PREFIX = "raw/"

#: preference order when ``query()`` is called without a mode
DEFAULT_MODE_ORDER = ("heta_rerank_search", "hybrid_search", "vector_search", "full_text_search", "sql_text_search")


@attrs.frozen
class DeletePlan:
    """What ``delete()`` removes (or would remove, with ``dry_run=True``), relative to the folder."""

    paths: tuple[str, ...]
    kept: tuple[str, ...]
    deleted: bool


class KnowledgeBase:
    def __init__(self, path: Path, recipe: Recipe, registry: PluginRegistry):
        self.path = path
        self.recipe = recipe
        self.registry = registry
        self.steps = expand_steps(recipe.steps)
        self._components: dict[str, Any] = {}
        self._writing = False
        self._queries_in_flight = 0
        # opened beside the stores, not among them: reopening the stores after another process's commit keeps it
        self.state: KnowledgeBaseState = self._open_component(f"stores.{STATE_SLOT}")
        self._load_state()
        self._engines: QueryEngineRegistry = registry.query_engine_registry()
        # mode -> why it is unavailable, valid while the run record's assets are the same object
        self._missing_cache: dict[str, list[str]] = {}
        self._missing_token: object = None
        self._being_built: frozenset[str] = frozenset()
        self._being_built_key: object = None
        self._lock = asyncio.Lock()
        self._sync: SyncKnowledgeBase | None = None

    # --- opening -------------------------------------------------------------------

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> KnowledgeBase:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    @classmethod
    def create(cls, path: Path | str, recipe: Recipe, *, registry: PluginRegistry | None = None, exist_ok: bool = False) -> KnowledgeBase:
        """Make a new knowledge-base folder for ``recipe`` (validated before anything is written)."""
        path = Path(path)
        registry = registry or _default_registry()
        if (path / RECIPE_FILE).exists() and not exist_ok:
            raise KnowledgeBaseError(f"{path} already holds a knowledge base. Use KnowledgeBase.load({str(path)!r}) or pick another folder.")
        kb = cls(path, recipe, registry)
        kb._raise_if_invalid()
        path.mkdir(parents=True, exist_ok=True)
        recipe.save(path / RECIPE_FILE)
        return kb

    @classmethod
    def load(cls, path: Path | str, *, registry: PluginRegistry | None = None, models: KnowledgeModels | None = None) -> KnowledgeBase:
        """Open an existing folder. ``models`` replaces the saved models (to pass API keys, for example)."""
        path = Path(path)
        registry = registry or _default_registry()
        if not (path / RECIPE_FILE).exists():
            raise KnowledgeBaseError(f"No knowledge base at {path} (no {RECIPE_FILE}). Create one with `heta init` or KnowledgeBase.create().")
        recipe = Recipe.load(path / RECIPE_FILE, registry)
        if models is not None:
            recipe = attrs.evolve(recipe, models=models)
        return cls(path, recipe, registry)

    def validate(self) -> list[str]:
        """Every problem that would stop a build (store options, step requirements, model providers); ``[]`` when it can run."""
        problems: list[str] = []
        for slot, store in self.recipe.stores.items():
            try:
                validate_store_options(slot, store, self.registry, f"$.stores.{slot}")
            except RecipeError as exc:
                problems.append(str(exc))
        try:
            validate_steps(
                self.steps,
                components=self.component_keys,
                registry=self.registry,
                existing_queries=self.run_record.queries,
                models=self.recipe.models.components(),
            )
        except RecipeValidationError as exc:
            problems.extend(exc.problems)
        return problems

    def _raise_if_invalid(self) -> None:
        problems = self.validate()
        if problems:
            raise RecipeValidationError(problems)

    # --- components ----------------------------------------------------------------

    @property
    def component_keys(self) -> set[str]:
        return set(self._component_keys)

    @functools.cached_property
    def _component_keys(self) -> frozenset[str]:
        # the recipe and the registry are fixed for this object's life, so the keys are too
        keys = set(self.recipe.models.components())
        keys |= {f"stores.{slot}" for slot in self.recipe.stores}
        keys |= {f"stores.{s.slot}" for s in self.registry.items["stores"].values() if s.default}
        keys |= {"parsers.documents"} | {f"parsers.{name}" for name in self.recipe.parsers}
        return frozenset(keys)

    def has_component(self, key: str) -> bool:
        return key in self._component_keys

    def get_component(self, key: str) -> Any:
        if key not in self._components:
            self._components[key] = self._open_component(key)
        return self._components[key]

    def _open_component(self, key: str) -> Any:
        kind, _, rest = key.partition(".")
        if kind == "models":
            config = self.recipe.models.components().get(key)
            if config is None:
                raise KnowledgeBaseError(f"The recipe has no {key}. Add it under [models] in {self.path / RECIPE_FILE}.")
            return self.registry.model_provider(config.provider, config.kind).create(config)
        if kind == "stores":
            store = self.recipe.stores.get(rest)
            slot = rest.split(".")[0]
            if store is None:
                defaults = [s for s in self.registry.store_types_for(slot) if s.default]
                if not defaults:
                    raise UnknownNameError(f"No store configured for {key} and no plugin provides a default {slot} store.")
                store_type, config = defaults[0], None
                if store_type.config_type is not None:
                    config = store_type.config_type()
            else:
                store_type = self.registry.store_type(slot, store.type)
                config = validate_store_options(rest, store, self.registry, f"$.stores.{rest}")
            return store_type.factory(config, self.path)
        if kind == "parsers":
            only = set(self.recipe.parsers[rest].only) if rest in self.recipe.parsers else set()
            parsers = [p for p in self.registry.parsers if not only or p.name in only]
            return ParserSet(parsers)
        raise UnknownNameError(f"Unknown component {key!r}: keys start with models., stores. or parsers.")

    def flush_stores(self) -> None:
        for key, component in self._components.items():
            if key.startswith("stores.") and hasattr(component, "flush"):
                component.flush()

    def close(self) -> None:
        """Close every open store and model client, and stop the ``kb.sync`` loop thread."""
        if self._sync is not None:
            sync, self._sync = self._sync, None
            sync.close()
        for key, component in list(self._components.items()):
            if hasattr(component, "close"):
                try:
                    component.close()
                except Exception:
                    log.exception("closing %s failed", key)
        self._components.clear()
        self.state.close()

    def secrets(self) -> list[Secret]:
        return [s for m in self.recipe.models.components().values() if (s := m.secret()) is not None]

    # --- documents -----------------------------------------------------------------

    @property
    def objects(self) -> Any:
        return self.get_component("stores.objects")

    @property
    def documents(self) -> dict[str, DocumentRecord]:
        """A copy of the catalog: document id -> ``DocumentRecord``."""
        return dict(self._catalog)

    def document(self, document_id: str) -> DocumentRecord:
        """One catalog entry, without copying the catalog (steps ask once per document)."""
        return self._catalog[document_id]

    def _save_catalog(self) -> None:
        self.state.write_catalog(self._catalog)

    def _save_removed(self) -> None:
        self.state.write_removed(self._removed)

    # --- state shared with other processes ------------------------------------------
    #
    # Another process may build this knowledge base while this object is open. Every commit of
    # its run record or catalog changes ``state.version()`` (the folder: a renamed file's inode,
    # mtime and size): then reload them and reopen the stores on what the other process wrote.

    def _load_state(self) -> None:
        self._state_stamp = self.state.version()  # before reading: a commit in between is seen next time
        self.run_record = RunRecord.open(self.state)
        self._catalog: dict[str, DocumentRecord] = self.state.read_catalog()
        self._removed: dict[str, dict[str, Any]] = self.state.read_removed()

    def _reload_if_changed(self, *, always: bool = False) -> bool:
        """Reload the run record, catalog and stores when another process changed them."""
        if self._writing or (not always and self.state.version() == self._state_stamp):
            return False
        self._load_state()
        stores = [key for key in self._components if key.startswith("stores.")]
        for key in stores:
            component = self._components.pop(key)
            # a query still running holds this store: leave it to the garbage collector then
            if self._queries_in_flight == 0 and hasattr(component, "close"):
                try:
                    component.close()
                except Exception:
                    log.exception("closing %s failed", key)
        return True

    @asynccontextmanager
    async def _writer(self, operation: str, wait: float | None) -> AsyncIterator[WriterLockProtocol]:
        lock = await self.state.writer_lock(operation).acquire_async(wait)
        try:
            yield self._begin_write(lock)
        finally:
            self._end_write(lock)

    @contextmanager
    def _writer_sync(self, operation: str, wait: float | None) -> Iterator[WriterLockProtocol]:
        lock = self.state.writer_lock(operation).acquire(wait)
        try:
            yield self._begin_write(lock)
        finally:
            self._end_write(lock)

    def _begin_write(self, lock: WriterLockProtocol) -> WriterLockProtocol:
        # a writer that waited (or was opened before another build) must start from what is on disk,
        # or it would write its stale in-memory stores over the other writer's work. Stores opened
        # while that other writer ran repaired nothing; its commit changed the stamp, so they reopen.
        self._reload_if_changed()
        self._writing = True
        return lock

    def _end_write(self, lock: WriterLockProtocol) -> None:
        self._writing = False
        self._state_stamp = self.state.version()
        lock.release()

    # --- taking documents in -----------------------------------------------------------

    async def _ingest(self, sources: list[Path | str | SourceDocument], *, prune: bool, force: bool) -> StepReport:
        """Copy new and changed documents in; report what was skipped, refused, deduplicated or pruned."""
        started = time.perf_counter()
        issues: list[StepIssue] = []
        stats: Counter[str] = Counter()

        def issue(code: str, subject: tuple[str, str], message: str, *, severity: str = "info", outcome: str = "") -> None:
            resolution = IssueResolution(action="skipped_document", outcome=outcome) if outcome else None
            issues.append(StepIssue(INGEST_STEP, IssueSubject(*subject), code, severity, message, resolution))

        walk = SourceWalk(sources)
        changed: list[str] = []
        now = time.time()
        file_by_content = {r.content_hash: r.id for r in self._catalog.values() if r.from_file}
        for item in walk:
            digest = content_hash(item.data)
            existing = self._catalog.get(item.id)
            if existing is not None and existing.content_hash == digest:
                if item.modified is not None and existing.modified != item.modified:
                    self._catalog[item.id] = attrs.evolve(existing, modified=item.modified)
                stats["documents_unchanged"] += 1
                continue
            removed = self._removed.get(item.id)
            if removed is not None and removed.get("content_hash") == digest and not force:
                issue(
                    "document_previously_removed", ("document", item.id),
                    f"{item.source} was removed with delete_documents and has not changed since; not added again.",
                    outcome="Build with force=True (CLI: --force) to add it back, or change the file.",
                )
                stats["documents_previously_removed"] += 1
                continue
            twin_id = file_by_content.get(digest) if existing is None and item.modified is not None else None
            twin = self._catalog.get(twin_id) if twin_id else None
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
                self.objects.delete(existing.raw_key)
            self.objects.put_bytes(raw_key, item.data)
            self._removed.pop(item.id, None)
            self._catalog[item.id] = DocumentRecord(
                id=item.id, source=item.source, name=item.name, content_hash=digest, size=len(item.data), raw_key=raw_key,
                metadata=item.metadata, modified=item.modified, added=existing.added if existing else now, updated=now,
            )
            if item.modified is not None:
                file_by_content[digest] = item.id
            stats["documents_changed" if existing is not None else "documents_added"] += 1
        for skipped in walk.skipped:
            issues.append(StepIssue(INGEST_STEP, IssueSubject("path", skipped.path), skipped.code, skipped.severity, skipped.message,
                                    IssueResolution(action="skipped_file", outcome="Not read.")))
            stats["paths_skipped"] += 1
        if changed:
            await self._delete_derived(changed)
        self.flush_stores()  # raw copies are durable before the catalog names them
        self._save_catalog()
        self._save_removed()
        if prune:
            gone = self._vanished_documents(walk.folders)
            for doc_id in gone:
                issue("document_pruned", ("document", doc_id), f"{self._catalog[doc_id].source} no longer exists; its document was removed.")
            if gone:
                await self._remove_documents(gone, remember=False)
            stats["documents_pruned"] = len(gone)
        return StepReport("ingest", INGEST_STEP, "done", time.perf_counter() - started, tuple(issues), dict(stats))

    def _vanished_documents(self, folders: Sequence[Path]) -> list[str]:
        """File documents under ``folders`` whose file is gone (an unreadable file is not gone)."""
        gone = []
        for record in self._catalog.values():
            if not record.from_file:
                continue
            source = Path(record.source)
            if any(source.is_relative_to(folder) for folder in folders) and not os.path.lexists(source):
                gone.append(record.id)
        return sorted(gone)

    # --- building ------------------------------------------------------------------

    async def build(
        self,
        sources: Iterable[Path | str | SourceDocument] = (),
        *,
        rebuild: bool = False,
        prune: bool = False,
        force: bool = False,
        wait: float | None = None,
        progress: ProgressFactory = no_progress,
    ) -> BuildReport:
        """Add ``sources`` (files, folders or ``SourceDocument``s) and run the recipe over every pending document.

        An interrupted build is resumed: its finished steps are skipped. ``rebuild=True`` runs
        every document through every step again (caches still apply). ``prune=True`` removes the
        documents whose file disappeared from the folders in ``sources``. ``force=True`` adds back
        documents removed with ``delete_documents`` even though their file did not change.
        ``wait`` is how many seconds to wait for another writer (``None``: fail at once with
        ``KnowledgeBaseLockedError``). ``report.ingest`` lists what the source
        walk skipped, refused, deduplicated or pruned.
        """
        sources = list(sources)
        check_given_documents(sources)  # a bad id is refused before anything is written
        async with self._lock, self._writer("built", wait) as lock:
            self._raise_if_invalid()
            ingest = await self._ingest(sources, prune=prune, force=force)
            if lock.stale_holder:
                ingest = attrs.evolve(ingest, issues=(*ingest.issues, _stale_lock_issue(lock.stale_holder)))
            keys = [step_key(i, s) for i, s in enumerate(self.steps)]
            last = self.run_record.last_run
            last_done = next((r for r in reversed(self.run_record.runs) if r["status"] == "done"), None)
            # a recipe whose steps changed since the last finished run must run over every document;
            # steps skip per-document work they already did (caches, upserts), so this stays cheap
            if rebuild or (last_done is not None and list(last_done["steps"]) != keys):
                self._catalog = {k: attrs.evolve(v, state="pending") for k, v in self._catalog.items()}
            pending = sorted(k for k, v in self._catalog.items() if v.state == "pending")
            resumed = bool(
                last and last["status"] != "done" and sorted(last["document_ids"]) == pending and list(last["steps"]) == keys
            )
            if resumed:
                run = last
                run["status"] = "running"
            else:
                if last and last["status"] != "done":
                    last["status"] = "superseded"
                if not pending:
                    self.run_record.save()
                    return BuildReport(run_id=last["id"] if last else 0, document_count=0, steps=(), ingest=ingest)
                run = self.run_record.start_run(pending, keys)
            run["ingest"] = {"issues": [issue_to_dict(i) for i in ingest.issues], "stats": dict(ingest.stats)}
            report = await run_steps(self, self.steps, run, resumed=resumed, progress=progress)
            retry = documents_to_retry(run)  # stay pending: the next plain build runs them again
            for doc_id in run["document_ids"]:
                if doc_id in self._catalog and doc_id not in retry:
                    self._catalog[doc_id] = attrs.evolve(self._catalog[doc_id], state="built")
            self._save_catalog()
            run.update(status="done", finished=time.time())
            self.run_record.save()
            return attrs.evolve(report, ingest=ingest)

    add_documents = build

    @property
    def search_assets(self) -> list[SearchAsset]:
        return self.run_record.search_assets

    # --- querying ------------------------------------------------------------------

    @property
    def query_engines(self) -> QueryEngineRegistry:
        return self._engines

    @property
    def available_queries(self) -> list[str]:
        """Modes whose assets the knowledge base has built and whose components the recipe has."""
        return [mode for mode in self._engines.modes if not self._missing(mode)]

    def unavailable_queries(self) -> dict[str, list[str]]:
        """mode -> reasons it is unavailable (missing assets/components)."""
        return {mode: list(reasons) for mode in self._engines.modes if (reasons := self._missing(mode))}

    def _missing(self, mode: str) -> list[str]:
        """Why ``mode`` is unavailable (empty: available), computed once per state of the published assets:
        every query, and each mode a composed query calls, asks."""
        token = self.run_record.assets_token
        if token is not self._missing_token:
            self._missing_cache = {}
            self._missing_token = token
        reasons = self._missing_cache.get(mode)
        if reasons is None:
            reasons = self._missing_cache[mode] = self._engines.missing(self._engines.get(mode), self.search_assets, self._component_keys)
        return reasons

    async def query(
        self,
        text: str,
        *,
        mode: str | None = None,
        top_k: int = 10,
        filters: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        trace: bool = False,
    ) -> QueryResponse:
        """Query the knowledge base. Without ``mode``, the best available of ``DEFAULT_MODE_ORDER``.

        ``response.metadata["mode"]`` names the mode that ran.
        """
        self._reload_if_changed()  # another process may have committed a build since the last query
        if mode is None:
            available = self.available_queries
            mode = next((m for m in DEFAULT_MODE_ORDER if m in available), None)
            if mode is None:
                raise KnowledgeBaseError("No query mode is available yet: build the knowledge base first (`heta build PATH`).")
        # the recipe's [query.MODE] defaults sit under the caller's own options
        options = {**self.recipe.query_defaults(mode), **(options or {})}
        request = QueryRequest(text=text, mode=mode, top_k=top_k, filters=filters or {}, options=options, trace=trace)
        response = await self._query_committed_state(request)
        # the writer's own steps may query what they are building; a lock probe only while a run is unfinished
        if not self._writing and (being_built := self._documents_being_built()) and self.state.writer_active():
            response = hide_documents(response, being_built)
        # which mode ran, so a caller that let Heta choose can tell (the CLI's --json shows it)
        return attrs.evolve(response, metadata={**response.metadata, "mode": mode})

    def _documents_being_built(self) -> frozenset[str]:
        """New documents of an unfinished run (``committed_view``), computed once per state of its record."""
        runs = self.run_record.runs
        key = (runs[-1]["id"], runs[-1]["started"], runs[-1]["status"], len(runs)) if runs else None
        if key != self._being_built_key:
            self._being_built = documents_being_built(runs)
            self._being_built_key = key
        return self._being_built

    async def _query_committed_state(self, request: QueryRequest) -> QueryResponse:
        """Run a query; a library error met while another process rewrites the stores is retried once on
        freshly opened stores, and becomes a retryable ``KnowledgeBaseBusyError`` if it happens again."""
        self._queries_in_flight += 1
        try:
            try:
                return await self._run_query(request, stack=())
            except HetaError:
                raise
            except Exception as first:
                if self._writing:
                    raise
                log.info("query met %s: reopening the stores and asking once more", type(first).__name__)
                self._reload_if_changed(always=True)
            try:
                return await self._run_query(request, stack=())
            except HetaError:
                raise
            except Exception as again:
                if not (self.state.writer_active() or self.state.version() != self._state_stamp):
                    raise
                raise KnowledgeBaseBusyError(
                    f"The knowledge base at {self.path} is being written by another process and the query met a "
                    f"half-written store ({type(again).__name__}). Retry the query (code {KnowledgeBaseBusyError.code}); "
                    "it reads the new state once the writer has committed."
                ) from again
        finally:
            self._queries_in_flight -= 1

    async def _run_query(self, request: QueryRequest, *, stack: Sequence[str], memo: QueryMemo | None = None) -> QueryResponse:
        engine = self._engines.get(request.mode)
        check_options(engine, request)  # before anything runs: an unknown or bad option is the caller's mistake
        if self._missing(request.mode):  # the cached answer; check_available words the error
            check_available(self._engines, engine, self.search_assets, self._component_keys)
        context = QueryContext(self, request, stack, memo)
        started = time.perf_counter()
        response = await engine.query(request, context)
        response = await self._maybe_answer(request, response)
        if request.trace:
            node = TraceNode(
                mode=request.mode,
                text=request.text,
                top_k=request.top_k,
                options=request.options,
                result_count=len(response.results),
                duration_ms=elapsed_ms(started),
                children=tuple(context.children),
                issues=tuple(response.metadata.get("issues", ())),
            )
            response = attrs.evolve(response, trace=node)
        return response

    async def _maybe_answer(self, request: QueryRequest, response: QueryResponse) -> QueryResponse:
        """``options={"answer": True}``: a grounded answer with citations, for any mode."""
        if not request.options.get("answer") or response.answer is not None:
            return response
        from heta_framework.builtin.answering import answer_from_results

        return await answer_from_results(self, request, response)

    # --- deleting ------------------------------------------------------------------

    def cleanup_paths(self) -> list[str]:
        paths: list[str] = []
        step_artifacts = self.run_record.data.get("step_artifacts", {})
        for step in self.steps:
            plan = step.cleanup_plan(step_artifacts.get(step.name, {}))
            for path in plan.paths:
                if path.startswith(f"objects/{RAW_PREFIX}") or path.rstrip("/") in ("objects/raw", "objects"):
                    raise KnowledgeBaseError(f"Step {step.name!r} lists raw inputs ({path}) in its cleanup plan; raw inputs are never deleted.")
                if path not in paths:
                    paths.append(path)
        return paths

    def delete(self, *, dry_run: bool = False, wait: float | None = None) -> DeletePlan:
        """Remove everything the steps built (their cleanup plans) and the run record.

        Raw inputs and the recipe stay, so ``build()`` can rebuild from them.
        With ``dry_run=True`` nothing is removed; the plan says what would be.
        ``wait``: seconds to wait for another writer, as in ``build``.
        """
        if dry_run:
            self._reload_if_changed()
            return self._delete_plan(deleted=False)
        with self._writer_sync("deleted", wait):
            plan = self._delete_plan(deleted=True)
            self.close()
            for relative in plan.paths:
                target = self.path / relative
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink(missing_ok=True)
            self.state.clear_run_record()
            self.run_record = RunRecord.open(self.state)
            self._catalog = {k: attrs.evolve(v, state="pending") for k, v in self._catalog.items()}
            self._save_catalog()
            return plan

    def compact(self, *, wait: float | None = None) -> CompactReport:
        """Make deleted documents' text physically gone: merge text-index segments, VACUUM every SQLite file.

        ``delete_documents`` removes a document from every store, but its bytes can linger in freed
        SQLite pages and unmerged index segments until then (``heta_framework.kb.compact``).
        ``wait``: seconds to wait for another writer, as in ``build``.
        """
        with self._writer_sync("compacted", wait):
            return compact_knowledge_base(self)

    def _delete_plan(self, *, deleted: bool) -> DeletePlan:
        paths = self.cleanup_paths() + [RECORD_FILE]
        existing = tuple(p for p in paths if (self.path / p).exists())
        return DeletePlan(paths=existing, kept=(RECIPE_FILE, CATALOG_FILE, f"objects/{RAW_PREFIX}"), deleted=deleted)

    async def _delete_derived(self, document_ids: Sequence[str]) -> None:
        """Remove what steps derived from these documents (steps with ``delete_documents``)."""
        context = StepContext(knowledge_base=self, step_name="delete_documents", artifacts={}, run_id=0, document_ids=list(document_ids))
        for step in self.steps:
            deleter = getattr(step, "delete_documents", None)
            if deleter is not None:
                await deleter(context, list(document_ids))
        self.flush_stores()

    async def delete_documents(
        self, document_ids: Sequence[str], *, dry_run: bool = False, wait: float | None = None
    ) -> list[DocumentRecord]:
        """Remove documents and everything derived from them, raw copies included; returns their records.

        A removed document is remembered (``removed.json``): building its folder again does not
        bring it back unless its file changed or the build passes ``force=True``.
        ``dry_run=True`` removes nothing and returns the records that would be removed.
        ``wait``: seconds to wait for another writer, as in ``build``.
        """
        ids = list(dict.fromkeys(document_ids))
        async with self._lock:
            if dry_run:
                self._reload_if_changed()
                return [self._catalog[d] for d in self._check_known(ids)]
            async with self._writer("changed (documents removed)", wait):
                return await self._remove_documents(self._check_known(ids), remember=True)

    def _check_known(self, ids: list[str]) -> list[str]:
        unknown = [d for d in ids if d not in self._catalog]
        if unknown:
            raise KnowledgeBaseError(f"Unknown document id(s): {', '.join(map(repr, unknown))}. See kb.documents for the ids.")
        return ids

    async def _remove_documents(self, ids: list[str], *, remember: bool) -> list[DocumentRecord]:
        await self._delete_derived(ids)
        removed = []
        for doc_id in ids:
            record = self._catalog.pop(doc_id)
            self.objects.delete(record.raw_key)
            if remember:
                self._removed[doc_id] = {"source": record.source, "content_hash": record.content_hash, "removed": time.time()}
            removed.append(record)
        self._save_catalog()
        self._save_removed()
        return removed

    @property
    def removed_documents(self) -> dict[str, dict[str, Any]]:
        """Documents removed with ``delete_documents``: id -> source, content hash, removal time."""
        return {k: dict(v) for k, v in self._removed.items()}

    # --- description ---------------------------------------------------------------

    @property
    def manifest(self) -> dict[str, Any]:
        """A JSON-able description: recipe summary, documents, runs, assets, modes."""
        states: dict[str, int] = {}
        for record in self._catalog.values():
            states[record.state] = states.get(record.state, 0) + 1
        return {
            "path": str(self.path),
            "recipe": self.recipe.summary(),
            "documents": {"total": len(self._catalog), **states},
            "runs": [
                {"id": r["id"], "status": r["status"], "documents": len(r["document_ids"]), "steps": {k: v["status"] for k, v in r["steps"].items()}}
                for r in self.run_record.runs
            ],
            "search_assets": [{"kind": a.kind, "name": a.name, "store": a.store} for a in self.search_assets],
            "available_queries": self.available_queries,
            "issues": len(self.run_record.all_issues()),
        }

    @property
    def sync(self) -> SyncKnowledgeBase:
        """Blocking calls that work from scripts, threads and inside a running event loop (``kb/sync.py``)."""
        if self._sync is None:
            self._sync = SyncKnowledgeBase(self, BackgroundLoop(f"heta-kb-{self.path.name}"))
        return self._sync


def _stale_lock_issue(holder: Mapping[str, Any]) -> StepIssue:
    return StepIssue(
        INGEST_STEP, IssueSubject("writer_lock", str(holder.get("pid", "?"))), "stale_writer_lock", "warning",
        f"The previous writer (PID {holder.get('pid')} on {holder.get('host')}) ended without releasing the writer lock "
        "(killed or crashed); this build took the lock over and resumes its work.",
    )


def _default_registry() -> PluginRegistry:
    from heta_framework.plugins.registry import PluginRegistry

    return PluginRegistry.from_entry_points()
