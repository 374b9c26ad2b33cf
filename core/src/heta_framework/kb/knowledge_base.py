"""``KnowledgeBase``: create or load a knowledge-base folder, build it, query it, delete it.

Folder layout::

    recipe.toml        the recipe (no API key values)
    run_record.json    runs, step status, artifacts, issues, capabilities, search assets
    catalog.json       every document: id, source, content hash, state
    objects/raw/       raw inputs (never deleted by cleanup)
    objects/parsed/    objects/chunks/   step outputs
    ...                store files (chunks.sqlite, vectors/, text_index/, graph.sqlite)
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from heta_framework.common.secrets import Secret
from heta_framework.errors import KnowledgeBaseError, RecipeError, RecipeValidationError, UnknownNameError
from heta_framework.kb.atomic import read_json, write_json_atomic
from heta_framework.kb.context import ProgressFactory, StepContext, no_progress
from heta_framework.kb.documents import DocumentRecord, ParserSet, SourceDocument, content_hash
from heta_framework.kb.query_memo import QueryMemo
from heta_framework.kb.query_options import check_options
from heta_framework.kb.recipe import KnowledgeModels, Recipe, expand_steps, validate_store_options
from heta_framework.kb.record import BuildReport, RunRecord
from heta_framework.kb.runner import run_steps, step_key, validate_steps
from heta_framework.kb.sync import BackgroundLoop, SyncKnowledgeBase
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

if TYPE_CHECKING:
    from heta_framework.plugins.registry import PluginRegistry

log = logging.getLogger(__name__)

RECIPE_FILE = "recipe.toml"
RECORD_FILE = "run_record.json"
CATALOG_FILE = "catalog.json"
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
        self.run_record = RunRecord.open(path / RECORD_FILE)
        self._catalog: dict[str, DocumentRecord] = {
            key: DocumentRecord(**value) for key, value in (read_json(path / CATALOG_FILE, {}) or {}).items()
        }
        self._components: dict[str, Any] = {}
        self._engines: QueryEngineRegistry = registry.query_engine_registry()
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
        keys = set(self.recipe.models.components())
        keys |= {f"stores.{slot}" for slot in self.recipe.stores}
        keys |= {f"stores.{s.slot}" for s in self.registry.items["stores"].values() if s.default}
        keys |= {"parsers.documents"} | {f"parsers.{name}" for name in self.recipe.parsers}
        return keys

    def has_component(self, key: str) -> bool:
        return key in self.component_keys

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
        write_json_atomic(self.path / CATALOG_FILE, {k: attrs.asdict(v) for k, v in self._catalog.items()})

    def _iter_sources(self, sources: Iterable[Path | str | SourceDocument]) -> Iterable[tuple[str, str, bytes, dict[str, Any], str]]:
        """(id, source, content, metadata, name) for each input; folders are walked."""
        for source in sources:
            if isinstance(source, SourceDocument):
                data = source.content()
                doc_id = source.id or content_hash(data)[:16]
                yield doc_id, source.source or source.name, data, dict(source.metadata), source.name
                continue
            path = Path(source)
            if not path.exists():
                raise KnowledgeBaseError(f"No such file or folder: {path}")
            files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts))
            for file in files:
                resolved = file.resolve()
                yield content_hash(str(resolved))[:16], str(resolved), file.read_bytes(), {}, file.name

    async def _ingest(self, sources: Iterable[Path | str | SourceDocument]) -> None:
        changed: list[str] = []
        for doc_id, source, data, metadata, name in self._iter_sources(sources):
            digest = content_hash(data)
            existing = self._catalog.get(doc_id)
            if existing is not None and existing.content_hash == digest:
                continue
            if existing is not None:
                changed.append(doc_id)
            suffix = Path(name).suffix.lower()
            raw_key = f"{RAW_PREFIX}{doc_id}{suffix}"
            self.objects.put_bytes(raw_key, data)
            self._catalog[doc_id] = DocumentRecord(
                id=doc_id, source=source, name=name, content_hash=digest, size=len(data), raw_key=raw_key, metadata=metadata
            )
        if changed:
            await self._delete_derived(changed)
        self.flush_stores()  # raw copies are durable before the catalog names them
        self._save_catalog()

    # --- building ------------------------------------------------------------------

    async def build(
        self,
        sources: Iterable[Path | str | SourceDocument] = (),
        *,
        rebuild: bool = False,
        progress: ProgressFactory = no_progress,
    ) -> BuildReport:
        """Add ``sources`` (files, folders or ``SourceDocument``s) and run the recipe over every pending document.

        An interrupted build is resumed: its finished steps are skipped. ``rebuild=True`` runs
        every document through every step again (caches still apply).
        """
        async with self._lock:
            self._raise_if_invalid()
            await self._ingest(sources)
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
                    return BuildReport(run_id=last["id"] if last else 0, document_count=0, steps=())
                run = self.run_record.start_run(pending, keys)
            report = await run_steps(self, self.steps, run, resumed=resumed, progress=progress)
            for doc_id in run["document_ids"]:
                if doc_id in self._catalog:
                    self._catalog[doc_id] = attrs.evolve(self._catalog[doc_id], state="built")
            self._save_catalog()
            run.update(status="done", finished=time.time())
            self.run_record.save()
            return report

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
        return self._engines.available_modes(self.search_assets, self.component_keys)

    def unavailable_queries(self) -> dict[str, list[str]]:
        """mode -> reasons it is unavailable (missing assets/components)."""
        assets = self.search_assets
        components = self.component_keys
        result = {}
        for mode in self._engines.modes:
            reasons = self._engines.missing(self._engines.get(mode), assets, components)
            if reasons:
                result[mode] = reasons
        return result

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
        if mode is None:
            available = self.available_queries
            mode = next((m for m in DEFAULT_MODE_ORDER if m in available), None)
            if mode is None:
                raise KnowledgeBaseError("No query mode is available yet: build the knowledge base first (`heta build PATH`).")
        request = QueryRequest(text=text, mode=mode, top_k=top_k, filters=filters or {}, options=options or {}, trace=trace)
        response = await self._run_query(request, stack=())
        # which mode ran, so a caller that let Heta choose can tell (the CLI's --json shows it)
        return attrs.evolve(response, metadata={**response.metadata, "mode": mode})

    async def _run_query(self, request: QueryRequest, *, stack: Sequence[str], memo: QueryMemo | None = None) -> QueryResponse:
        engine = self._engines.get(request.mode)
        check_options(engine, request)  # before anything runs: an unknown or bad option is the caller's mistake
        check_available(self._engines, engine, self.search_assets, self.component_keys)
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

    def delete(self, *, dry_run: bool = False) -> DeletePlan:
        """Remove everything the steps built (their cleanup plans) and the run record.

        Raw inputs and the recipe stay, so ``build()`` can rebuild from them.
        With ``dry_run=True`` nothing is removed; the plan says what would be.
        """
        paths = self.cleanup_paths() + [RECORD_FILE]
        existing = tuple(p for p in paths if (self.path / p).exists())
        kept = (RECIPE_FILE, CATALOG_FILE, f"objects/{RAW_PREFIX}")
        if dry_run:
            return DeletePlan(paths=existing, kept=kept, deleted=False)
        self.close()
        for relative in existing:
            target = self.path / relative
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
        self.run_record = RunRecord.open(self.path / RECORD_FILE)
        self._catalog = {k: attrs.evolve(v, state="pending") for k, v in self._catalog.items()}
        self._save_catalog()
        return DeletePlan(paths=existing, kept=kept, deleted=True)

    async def _delete_derived(self, document_ids: Sequence[str]) -> None:
        """Remove what steps derived from these documents (steps with ``delete_documents``)."""
        context = StepContext(knowledge_base=self, step_name="delete_documents", artifacts={}, run_id=0, document_ids=list(document_ids))
        for step in self.steps:
            deleter = getattr(step, "delete_documents", None)
            if deleter is not None:
                await deleter(context, list(document_ids))
        self.flush_stores()

    async def delete_documents(self, document_ids: Sequence[str]) -> None:
        """Remove documents and everything derived from them, raw copies included."""
        async with self._lock:
            unknown = [d for d in document_ids if d not in self._catalog]
            if unknown:
                raise KnowledgeBaseError(f"Unknown document id(s): {', '.join(unknown)}. See kb.documents for the ids.")
            await self._delete_derived(document_ids)
            for doc_id in document_ids:
                record = self._catalog.pop(doc_id)
                self.objects.delete(record.raw_key)
            self._save_catalog()

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


def _default_registry() -> PluginRegistry:
    from heta_framework.plugins.registry import PluginRegistry

    return PluginRegistry.from_entry_points()
