"""``StepContext``: how a running step reaches components, artifacts, issues and progress."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from heta_framework.contracts.components import ComponentAccessors
from heta_framework.contracts.progress import ProgressFactory, ProgressHandle, no_progress
from heta_framework.contracts.steps import IssueResolution, IssueSubject, StepIssue
from heta_framework.errors import HetaError

if TYPE_CHECKING:
    from heta_framework.common.secrets import Secret
    from heta_framework.contracts.documents import DocumentRecord
    from heta_framework.contracts.executor import BatchFailure, BatchWork, ExecutorProtocol, OnResult
    from heta_framework.contracts.state import CacheProtocol, KnowledgeBaseState
    from heta_framework.plugins.query_engines import QueryEngineRegistry
    from heta_framework.plugins.registry import PluginRegistry
    from heta_framework.runtime.recipe import Recipe

B = TypeVar("B")
R = TypeVar("R")

__all__ = ["ProgressFactory", "ProgressHandle", "StepContext", "StepHost", "no_progress"]


class StepHost(Protocol):
    """What a running step reaches through ``context.knowledge_base`` (the ``KnowledgeBase`` is one)."""

    path: Path
    state: KnowledgeBaseState
    recipe: Recipe
    registry: PluginRegistry

    @property
    def executor(self) -> ExecutorProtocol: ...

    @property
    def query_engines(self) -> QueryEngineRegistry: ...

    def document(self, document_id: str) -> DocumentRecord: ...

    def get_component(self, key: str) -> Any: ...

    def has_component(self, key: str) -> bool: ...

    def secrets(self) -> list[Secret]: ...




class StepContext(ComponentAccessors):
    """Satisfies ``StepContextProtocol`` (typed component accessors from ``ComponentAccessors``) for one step run."""

    def __init__(
        self,
        *,
        knowledge_base: StepHost,
        step_name: str,
        artifacts: Mapping[str, Any],
        run_id: int,
        document_ids: list[str],
        progress: ProgressFactory = no_progress,
    ):
        self.knowledge_base = knowledge_base
        self.step_name = step_name
        self.run_id = run_id
        self.document_ids = document_ids
        self._artifacts = dict(artifacts)
        self.produced: dict[str, Any] = {}
        self.issues: list[StepIssue] = []
        self.stats: Counter[str] = Counter()
        self.asset_metadata: dict[tuple[str, str], dict[str, Any]] = {}
        self.retry_documents: set[str] = set()
        self._progress = progress

    # --- StepContextProtocol ---------------------------------------------------------

    def get_component(self, key: str) -> Any:
        return self.knowledge_base.get_component(key)

    def get_artifact(self, key: str) -> Any:
        try:
            return self._artifacts[key]
        except KeyError:
            raise HetaError(
                f"Step {self.step_name!r} asked for artifact {key!r}, which no earlier step produced. "
                f"Declare it in the step's requirements so the recipe is checked before the build; available: "
                f"{', '.join(sorted(self._artifacts)) or '(none)'}."
            ) from None

    def set_artifact(self, key: str, value: Any) -> None:
        try:
            json.dumps(value)
        except TypeError as exc:
            raise HetaError(
                f"Step {self.step_name!r} set artifact {key!r} to a value that cannot be saved as JSON ({exc}). "
                "Artifacts are persisted so builds can resume: store keys or ids, and put data in a store."
            ) from None
        self._artifacts[key] = value
        self.produced[key] = value

    # --- extras ----------------------------------------------------------------------

    @property
    def root(self) -> Path:
        """The knowledge-base folder."""
        return self.knowledge_base.path

    def document(self, document_id: str) -> DocumentRecord:
        """The catalog entry (``DocumentRecord``) of a document in this knowledge base."""
        return self.knowledge_base.document(document_id)

    def has_component(self, key: str) -> bool:
        return self.knowledge_base.has_component(key)

    def cache(self, name: str) -> CacheProtocol:
        """The knowledge base's cache ``name`` (``CacheProtocol``: bytes by content-hash key), wherever
        its state lives: the folder, or the server the recipe's ``[stores.state]`` names."""
        return self.knowledge_base.state.cache(name)

    def report(
        self,
        code: str,
        message: str,
        *,
        subject: tuple[str, str],
        severity: str = "warning",
        action: str | None = None,
        outcome: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> StepIssue:
        """Record a recoverable problem as a ``StepIssue`` and go on."""
        resolution = IssueResolution(action=action, outcome=outcome or "") if action else None
        issue = StepIssue(
            step=self.step_name,
            subject=IssueSubject(type=subject[0], id=subject[1]),
            code=code,
            severity=severity,
            message=message,
            resolution=resolution,
            details={k: str(v) for k, v in (details or {}).items()},
        )
        self.add_issue(issue)
        return issue

    def add_issue(self, issue: StepIssue) -> None:
        self.issues.append(issue)

    def describe_asset(self, kind: str, name: str, metadata: Mapping[str, Any]) -> None:
        """Add metadata known only while running (the backend or analyzer actually used, a model's
        dimension) to a search asset this step publishes; the run record keeps it with the asset."""
        try:
            json.dumps(dict(metadata))
        except TypeError as exc:
            raise HetaError(f"Step {self.step_name!r} described asset {kind}:{name} with metadata that is not JSON ({exc}).") from None
        self.asset_metadata.setdefault((kind, name), {}).update(metadata)

    def retry_document(self, document_id: str) -> None:
        """Keep a document pending after this build, so the next plain build runs it again.

        For work that failed for a passing reason (a model server that was down): the
        build goes on, and the next ``heta build`` retries the document; caches make
        the repeat cheap (only what failed is asked again).
        """
        self.retry_documents.add(document_id)

    def count(self, name: str, amount: int = 1) -> None:
        """Add to a statistic shown in the build report (``llm_calls``, ``cache_hits``, ...)."""
        self.stats[name] += amount

    def progress(self, description: str, total: int | None = None) -> ProgressHandle:
        return self._progress(description, total)

    # --- fanned-out work (heta_framework.contracts.executor) -----------------------------

    async def map_batches(
        self, work: BatchWork[B, R], batches: Sequence[B], *, on_result: OnResult | None = None, limit: int | None = None,
    ) -> list[R | BatchFailure]:
        """Run ``work`` over ``batches`` on the recipe's executor: one result (or ``BatchFailure``) per batch, in order."""
        executor = self.knowledge_base.executor
        results = await executor.map(work, batches, models=self, on_result=on_result, limit=limit, step=self.step_name)
        self.count("executor_tasks", len(batches))
        return results

    @property
    def executor_in_process(self) -> bool:
        """True when ``map_batches`` runs work in this process (the ``local`` executor): a step may then keep
        driver-side behaviour, such as one cache and one limiter shared by every call, instead of batches."""
        # an executor that does not say runs work elsewhere: batches work on any executor
        return bool(getattr(self.knowledge_base.executor, "in_process", False))

    def model_config(self, key: str) -> Any:
        """The recipe's configuration of the model ``key`` (what a worker elsewhere opens its own client from)."""
        return self.knowledge_base.recipe.models.components()[key]

    def open_model(self, key: str) -> Any:
        return self.get_component(key)

    def model_plugin(self, key: str) -> str:
        """The plugin that provides the model ``key`` ("" when core does): a worker elsewhere loads only it."""
        config = self.model_config(key)
        return self.knowledge_base.registry.owner("model_providers", f"{config.kind}:{config.provider}")
