"""``KnowledgeBase``: create or load a knowledge-base folder, build it, query it, delete it.

Folder layout::

    recipe.toml        the recipe (no API key values)
    run_record.json    runs, step status, artifacts, issues, capabilities, search assets
    catalog.json       every document: id, source, content hash, state, file mtime and size
    removed.json       documents removed with delete_documents (a build does not bring them back)
    writer.lock        the writer lock (common/writer_lock.py): one build/remove/delete at a time, across processes

The run record, catalog, removed documents, caches and writer lock are the
knowledge base's state (``contracts/state.py``): in the folder by default
(``builtin/stores/folder_state.py``), or on a server when the recipe says ``[stores.state]``.
    objects/raw/       raw inputs (never deleted by cleanup)
    objects/parsed/    objects/chunks/   step outputs
    ...                store files (chunks.sqlite, vectors/, text_index/, graph.sqlite)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.builtin.stores.folder_state import CATALOG_FILE, RECORD_FILE, REMOVED_FILE
from heta_framework.common.audit import audit
from heta_framework.common.secrets import Secret
from heta_framework.contracts.access import AccessScope, check_principals
from heta_framework.contracts.documents import DocumentRecord, SourceDocument
from heta_framework.contracts.executor import ExecutorProtocol
from heta_framework.contracts.progress import ProgressFactory, no_progress
from heta_framework.contracts.query_memo import QueryMemo
from heta_framework.contracts.record import BuildReport, RunRecord
from heta_framework.contracts.search import QueryRequest, QueryResponse, SearchAsset
from heta_framework.contracts.state import KnowledgeBaseState
from heta_framework.errors import KnowledgeBaseError, RecipeError, RecipeValidationError
from heta_framework.kb.parts.access_control import AccessControl
from heta_framework.kb.parts.building import Builder
from heta_framework.kb.parts.component_set import RECIPE_FILE, ComponentSet
from heta_framework.kb.parts.ingest import INGEST_STEP, RAW_PREFIX
from heta_framework.kb.parts.loaded_state import LoadedState
from heta_framework.kb.parts.maintenance import DeletePlan, Maintenance
from heta_framework.kb.parts.querying import DEFAULT_MODE_ORDER, Querying
from heta_framework.kb.parts.removal import DocumentRemoval
from heta_framework.kb.sync import BackgroundLoop, SyncKnowledgeBase
from heta_framework.plugins.query_engines import QueryEngineRegistry
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.runtime.compact import CompactReport
from heta_framework.runtime.recipe import KnowledgeModels, Recipe, expand_steps, validate_store_options
from heta_framework.runtime.runner import validate_steps
from heta_framework.runtime.sources import check_given_documents

STATE_SLOT = "state"
__all__ = [
    "CATALOG_FILE", "DEFAULT_MODE_ORDER", "INGEST_STEP", "RAW_PREFIX", "RECIPE_FILE", "RECORD_FILE", "REMOVED_FILE", "DeletePlan", "KnowledgeBase",
]


class KnowledgeBase:
    """A knowledge-base folder: its recipe, components and state. The work is done by focused parts
    (``kb/parts/``: ``component_set``, ``loaded_state``, ``ingest``, ``building``, ``querying``, ``removal``,
    ``maintenance``); this class opens them together and keeps the public API in one place."""

    def __init__(self, path: Path, recipe: Recipe, registry: PluginRegistry):
        self.path = path
        self.recipe = recipe
        self.registry = registry
        self.steps = expand_steps(recipe.steps)
        self._components = ComponentSet(path, recipe, registry)
        # opened beside the stores, not among them: reopening the stores after another process's commit keeps it
        self.state: KnowledgeBaseState = self._components.open(f"stores.{STATE_SLOT}")
        self._loaded = LoadedState(self.state, self._components)
        self._removal = DocumentRemoval(self, self.steps, self._loaded, self._components)
        self._builder = Builder(
            self, self.steps, loaded=self._loaded, components=self._components, removal=self._removal, check_recipe=self._raise_if_invalid,
        )
        self._access = AccessControl(self._loaded, recipe.access)
        self._queries = Querying(
            self, registry.query_engine_registry(), path=path, recipe=recipe, loaded=self._loaded, component_keys=self._components.keys,
            access=self._access,
        )
        self._maintenance = Maintenance(self, self.steps, path=path, loaded=self._loaded, close=self.close)
        self._lock = asyncio.Lock()  # one build or removal at a time in this process (the writer lock is across processes)
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
                problems.extend(getattr(exc, "problems", None) or [str(exc)])  # one entry per problem, so counts are true
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
        return set(self._components.keys)

    def has_component(self, key: str) -> bool:
        return key in self._components.keys

    def get_component(self, key: str) -> Any:
        return self._components.get(key)

    @property
    def executor(self) -> ExecutorProtocol:
        """Where the build's fanned-out work runs: the recipe's ``[executor]``, or ``local``."""
        return self._components.executor

    def flush_stores(self) -> None:
        self._components.flush_stores()

    def close(self) -> None:
        """Close every open store and model client, and stop the ``kb.sync`` loop thread."""
        if self._sync is not None:
            sync, self._sync = self._sync, None
            sync.close()
        self._components.close()
        self.state.close()

    @property
    def usage_totals(self) -> dict[str, Any]:
        """Every model call made through this knowledge base since it was opened, by model, with totals (the
        shape of ``response.usage``; ``heta serve`` shows it per knowledge base)."""
        return self._components.usage.to_dict()

    def secrets(self) -> list[Secret]:
        return [s for m in self.recipe.models.components().values() if (s := m.secret()) is not None]

    # --- documents and state ---------------------------------------------------------

    @property
    def objects(self) -> Any:
        return self.get_component("stores.objects")

    @property
    def documents(self) -> dict[str, DocumentRecord]:
        """A copy of the catalog: document id -> ``DocumentRecord``."""
        return dict(self._loaded.catalog)

    def document(self, document_id: str) -> DocumentRecord:
        """One catalog entry, without copying the catalog (steps ask once per document)."""
        return self._loaded.catalog[document_id]

    @property
    def removed_documents(self) -> dict[str, dict[str, Any]]:
        """Documents removed with ``delete_documents``: id -> source, content hash, removal time."""
        return {k: dict(v) for k, v in self._loaded.removed.items()}

    @property
    def run_record(self) -> RunRecord:
        return self._loaded.run_record

    @property
    def search_assets(self) -> list[SearchAsset]:
        return self._loaded.run_record.search_assets

    def _reload_if_changed(self, *, always: bool = False) -> bool:
        """Read the state again when another process committed since (``LoadedState.reload_if_changed``)."""
        return self._loaded.reload_if_changed(always=always)

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
        access: Iterable[str] | None = None,
        actor: str | None = None,
    ) -> BuildReport:
        """Add ``sources`` (files, folders or ``SourceDocument``s) and run the recipe over every pending document.

        An interrupted build is resumed: its finished steps are skipped. ``rebuild=True`` runs
        every document through every step again (caches still apply). ``prune=True`` removes the
        documents whose file disappeared from the folders in ``sources``. ``force=True`` adds back
        documents removed with ``delete_documents`` even though their file did not change.
        ``wait`` is how many seconds to wait for another writer (``None``: fail at once with
        ``KnowledgeBaseLockedError``). ``report.ingest`` lists what the source
        walk skipped, refused, deduplicated or pruned.

        ``access`` is the access list of every document of this build (principals, ``"public"`` for
        everyone; docs/security.md); without it documents take their sidecar ``.access`` files, the recipe's
        ``[access]`` rules, or keep the list they had. ``actor`` names who builds in the audit log.
        """
        sources = list(sources)
        check_given_documents(sources)  # a bad id is refused before anything is written
        readers = None if access is None else check_principals(access, what="access")
        async with self._lock:
            report = await self._builder.build(sources, rebuild=rebuild, prune=prune, force=force, wait=wait, progress=progress,
                                               access=readers, policy=self.recipe.access)
        audit("build", actor, self.path, run_id=report.run_id, documents=report.document_count, ingest=dict(report.ingest.stats)
              if report.ingest else {}, access=list(readers) if readers is not None else None)
        return report

    add_documents = build

    # --- querying ------------------------------------------------------------------

    @property
    def query_engines(self) -> QueryEngineRegistry:
        return self._queries.engines

    @property
    def available_queries(self) -> list[str]:
        """Modes whose assets the knowledge base has built and whose components the recipe has."""
        return self._queries.available()

    def unavailable_queries(self) -> dict[str, list[str]]:
        """mode -> reasons it is unavailable (missing assets/components)."""
        return self._queries.unavailable()

    async def query(
        self,
        text: str,
        *,
        mode: str | None = None,
        top_k: int = 10,
        filters: Mapping[str, Any] | None = None,
        options: Mapping[str, Any] | None = None,
        trace: bool = False,
        principals: Iterable[str] | None = None,
    ) -> QueryResponse:
        """Query the knowledge base. Without ``mode``, the best available of ``DEFAULT_MODE_ORDER``.

        ``principals`` are who asks: the query sees only documents they may read (none given: the public
        documents), in every mode, derived results included (docs/security.md).
        ``response.metadata["mode"]`` names the mode that ran.
        """
        return await self._queries.query(text, mode=mode, top_k=top_k, filters=filters, options=options, trace=trace, principals=principals)

    def access_scope(self, principals: Iterable[str] | None = None) -> AccessScope:
        """What a caller with ``principals`` may read: ``scope.allows(document_id)``."""
        self._loaded.reload_if_changed()
        return self._access.scope(principals)

    def readers(self, document_id: str) -> tuple[str, ...]:
        """Who may read the document: its own access list or the recipe's default."""
        return self._access.readers(self.document(document_id))

    def set_access(
        self, document_ids: Sequence[str], access: Iterable[str] | None, *, wait: float | None = None, actor: str | None = None,
    ) -> list[DocumentRecord]:
        """Give documents a new access list (``None``: the recipe's default); returns the records that changed.

        Only the catalog changes: nothing is parsed or embedded again, and the next query follows it.
        """
        with self._loaded.writer_sync("changed (access lists)", wait):
            changed = self._access.set_access(list(document_ids), access)
        audit("set_access", actor, self.path, documents=[r.id for r in changed], access=None if access is None else sorted(set(access)))
        return changed

    async def _run_query(self, request: QueryRequest, *, stack: Sequence[str], memo: QueryMemo | None = None) -> QueryResponse:
        """A mode called by another one (``QueryContext.query``): ``request`` as given, under the caller's stack."""
        return await self._queries.run(request, stack=stack, memo=memo)

    # --- removing and maintenance --------------------------------------------------------

    def cleanup_paths(self) -> list[str]:
        return self._maintenance.cleanup_paths()

    def delete(self, *, dry_run: bool = False, wait: float | None = None) -> DeletePlan:
        """Remove everything the steps built (their cleanup plans) and the run record.

        Raw inputs and the recipe stay, so ``build()`` can rebuild from them.
        With ``dry_run=True`` nothing is removed; the plan says what would be.
        ``wait``: seconds to wait for another writer, as in ``build``.
        """
        return self._maintenance.delete(dry_run=dry_run, wait=wait)

    def compact(self, *, wait: float | None = None) -> CompactReport:
        """Make deleted documents' text physically gone: merge text-index segments, VACUUM every SQLite file.

        ``delete_documents`` removes a document from every store, but its bytes can linger in freed
        SQLite pages and unmerged index segments until then (``heta_framework.kb.compact``).
        ``wait``: seconds to wait for another writer, as in ``build``.
        """
        return self._maintenance.compact(wait=wait)

    async def delete_documents(
        self, document_ids: Sequence[str], *, dry_run: bool = False, wait: float | None = None, actor: str | None = None,
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
                self._loaded.reload_if_changed()
                return [self._loaded.catalog[d] for d in self._removal.check_known(ids)]
            async with self._loaded.writer("changed (documents removed)", wait):
                removed = await self._removal.remove(self._removal.check_known(ids), remember=True)
        audit("remove", actor, self.path, documents=[r.id for r in removed])
        return removed

    async def removal_preview(self, document_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """What ``delete_documents`` would take, per step that can tell (``{"split_documents": {"chunks": 12}, ...}``)."""
        self._loaded.reload_if_changed()
        return await self._removal.preview(self._removal.check_known(list(dict.fromkeys(document_ids))))

    # --- description ---------------------------------------------------------------

    @property
    def manifest(self) -> dict[str, Any]:
        """A JSON-able description: recipe summary, documents, runs, assets, modes."""
        states: dict[str, int] = {}
        for record in self._loaded.catalog.values():
            states[record.state] = states.get(record.state, 0) + 1
        return {
            "path": str(self.path),
            "recipe": self.recipe.summary(),
            "documents": {"total": len(self._loaded.catalog), **states},
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


def _default_registry() -> PluginRegistry:
    return PluginRegistry.from_entry_points()
