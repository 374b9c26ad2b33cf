"""Queries against the committed state: which modes are available and why not, running a request
through its engine (and the modes it calls), grounded answers, and hiding documents a writer in
another process has not finished building."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.builtin.answering import answer_from_results
from heta_framework.common import tracing
from heta_framework.common.usage import metering, usage_attributes
from heta_framework.contracts.query_memo import QueryMemo
from heta_framework.contracts.query_options import check_options
from heta_framework.contracts.search import QueryContext, QueryHost, QueryRequest, QueryResponse, TraceNode, elapsed_ms
from heta_framework.errors import HetaError, KnowledgeBaseBusyError, KnowledgeBaseError
from heta_framework.kb.parts.access_control import AccessControl
from heta_framework.kb.parts.loaded_state import LoadedState
from heta_framework.plugins.query_engines import QueryEngineRegistry, check_available
from heta_framework.runtime.committed_view import documents_being_built, hide_documents, keep_readable
from heta_framework.runtime.recipe import Recipe

log = logging.getLogger(__name__)

#: preference order when ``query()`` is called without a mode
DEFAULT_MODE_ORDER = ("heta_rerank_search", "hybrid_search", "fusion_search", "vector_search", "full_text_search", "sql_text_search")


class Querying:
    def __init__(
        self, host: QueryHost, engines: QueryEngineRegistry, *, path: Path, recipe: Recipe, loaded: LoadedState, component_keys: frozenset[str],
        access: AccessControl,
    ):
        self._host = host  # what engines see as context.knowledge_base
        self._path = path
        self.engines = engines
        self._recipe = recipe
        self._loaded = loaded
        self._component_keys = component_keys
        self._access = access
        # mode -> why it is unavailable, valid while the run record's assets are the same object
        self._missing_cache: dict[str, list[str]] = {}
        self._missing_token: object = None
        self._being_built: frozenset[str] = frozenset()
        self._being_built_key: object = None

    # --- which modes ---------------------------------------------------------------

    def available(self) -> list[str]:
        return [mode for mode in self.engines.modes if not self.missing(mode)]

    def unavailable(self) -> dict[str, list[str]]:
        return {mode: list(reasons) for mode in self.engines.modes if (reasons := self.missing(mode))}

    def missing(self, mode: str) -> list[str]:
        """Why ``mode`` is unavailable (empty: available), computed once per state of the published assets:
        every query, and each mode a composed query calls, asks."""
        record = self._loaded.run_record
        if record.assets_token is not self._missing_token:
            self._missing_cache = {}
            self._missing_token = record.assets_token
        reasons = self._missing_cache.get(mode)
        if reasons is None:
            engine = self.engines.get(mode)
            reasons = self._missing_cache[mode] = self.engines.missing(engine, record.search_assets, self._component_keys)
        return reasons

    # --- running -------------------------------------------------------------------

    async def query(
        self, text: str, *, mode: str | None, top_k: int, filters: Mapping[str, Any] | None, options: Mapping[str, Any] | None, trace: bool,
        principals: Iterable[str] | None = None,
    ) -> QueryResponse:
        loaded = self._loaded
        loaded.reload_if_changed()  # another process may have committed a build since the last query
        scope = self._access.scope(principals)
        if mode is not None:
            mode = self.engines.canonical(mode)  # upstream's names (graph_rag_local_query, ...) lead to our modes
        if mode is None:
            available = self.available()
            mode = next((m for m in DEFAULT_MODE_ORDER if m in available), None)
            if mode is None:
                raise KnowledgeBaseError("No query mode is available yet: build the knowledge base first (`heta build PATH`).")
        # the recipe's [query.MODE] defaults sit under the caller's own options
        options = {**self._recipe.query_defaults(mode), **(options or {})}
        request = QueryRequest(text=text, mode=mode, top_k=top_k, filters=filters or {}, options=options, trace=trace, access=scope)
        attributes = {"heta.kb": self._path.name, "heta.query.mode": mode, "heta.query.top_k": top_k, **tracing.query_text_attributes(text)}
        with tracing.span("heta.query", attributes) as span, metering() as meter:
            response = await self._query_committed_state(request)
            # the writer's own steps may query what they are building; a lock probe only while a run is unfinished
            if not loaded.writing and (being_built := self._documents_being_built()) and loaded.state.writer_active():
                response = hide_documents(response, being_built)
            usage = meter.to_dict()
            tracing.set_attributes(span, {"heta.query.results": len(response.results), **usage_attributes(usage)})
        # which mode ran, so a caller that let Heta choose can tell (the CLI's --json shows it)
        return attrs.evolve(response, metadata={**response.metadata, "mode": mode}, usage=usage)

    def _documents_being_built(self) -> frozenset[str]:
        """New documents of an unfinished run (``committed_view``), computed once per state of its record."""
        runs = self._loaded.run_record.runs
        key = (runs[-1]["id"], runs[-1]["started"], runs[-1]["status"], len(runs)) if runs else None
        if key != self._being_built_key:
            self._being_built = documents_being_built(runs)
            self._being_built_key = key
        return self._being_built

    async def _query_committed_state(self, request: QueryRequest) -> QueryResponse:
        """Run a query; a library error met while another process rewrites the stores is retried once on
        freshly opened stores, and becomes a retryable ``KnowledgeBaseBusyError`` if it happens again."""
        loaded = self._loaded
        loaded.queries_in_flight += 1
        try:
            try:
                return await self.run(request, stack=())
            except HetaError:
                raise
            except Exception as first:
                if loaded.writing:
                    raise
                log.info("query met %s: reopening the stores and asking once more", type(first).__name__)
                loaded.reload_if_changed(always=True)
            try:
                return await self.run(request, stack=())
            except HetaError:
                raise
            except Exception as again:
                if not loaded.changed_elsewhere():
                    raise
                raise KnowledgeBaseBusyError(
                    f"The knowledge base at {self._path} is being written by another process and the query met a "
                    f"half-written store ({type(again).__name__}). Retry the query (code {KnowledgeBaseBusyError.code}); "
                    "it reads the new state once the writer has committed."
                ) from again
        finally:
            loaded.queries_in_flight -= 1

    async def run(self, request: QueryRequest, *, stack: Sequence[str], memo: QueryMemo | None = None) -> QueryResponse:
        """``request`` through its engine, as given; ``stack`` is the chain of modes that called it."""
        engine = self.engines.get(request.mode)
        check_options(engine, request)  # before anything runs: an unknown or bad option is the caller's mistake
        if self.missing(request.mode):  # the cached answer; check_available words the error
            check_available(self.engines, engine, self._loaded.run_record.search_assets, self._component_keys)
        scope = request.access
        if scope is not None and scope.restricted:
            # the engine sees the caller's documents as a filter its stores apply before ranking: top-k is the caller's
            request = attrs.evolve(request, filters=scope.restrict(request.filters))
        context = QueryContext(self._host, request, stack, memo)
        started = time.perf_counter()
        attributes = {"heta.kb": self._path.name, "heta.query.mode": request.mode, "heta.query.top_k": request.top_k,
                      "heta.query.depth": len(stack), "heta.query.caller": stack[-1] if stack else None}
        with tracing.span(f"heta.query.mode {request.mode}", attributes) as span:
            response = keep_readable(await engine.query(request, context), scope)
            response = await self._maybe_answer(request, response)
            tracing.set_attributes(span, {"heta.query.results": len(response.results), "heta.query.issues": len(response.metadata.get("issues", ()))})
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
        return await answer_from_results(self._host, request, response)
