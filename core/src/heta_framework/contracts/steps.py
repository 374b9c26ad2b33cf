"""Step protocols: requirements, capabilities, issues, cleanup plans (component references: ``components``).

A step is a build action, not a component container: it names the models,
stores and parsers it needs through ``ComponentRef``s, and the runner resolves
them from the recipe. ``ExtractRelations(model="strong")`` means "the language
model the recipe names ``strong``", never a model instance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

import attrs

from heta_framework.contracts.components import ComponentAccessProtocol, ComponentRef
from heta_framework.contracts.search import SearchAsset

if TYPE_CHECKING:
    from collections import Counter

    from heta_framework.contracts.documents import DocumentRecord
    from heta_framework.contracts.executor import BatchFailure, BatchWork, OnResult
    from heta_framework.contracts.progress import ProgressHandle
    from heta_framework.contracts.state import CacheProtocol

B = TypeVar("B")
R = TypeVar("R")


@attrs.frozen
class StepRequirements:
    """What must exist before a step runs: recipe components, earlier artifacts, available queries."""

    components: frozenset[ComponentRef] = frozenset()
    artifacts: frozenset[str] = frozenset()
    queries: frozenset[str] = frozenset()


@attrs.frozen
class StepCapabilities:
    """What a step provides once it finished: artifacts, user-visible queries, search assets."""

    artifacts: frozenset[str] = frozenset()
    queries: frozenset[str] = frozenset()
    search_assets: tuple[SearchAsset, ...] = ()


@attrs.frozen
class IssueSubject:
    """What an issue is about: ``document``, ``chunk``, ``dedup_group``, ``vector_record``, ..."""

    type: str
    id: str


@attrs.frozen
class IssueResolution:
    """What the framework did about a problem, and the outcome."""

    action: str
    outcome: str


Severity = Literal["info", "warning", "error"]


def _check_severity(instance: Any, attribute: attrs.Attribute[str], value: str) -> None:
    if value not in ("info", "warning", "error"):
        raise ValueError(f"severity must be 'info', 'warning' or 'error', got {value!r}")


def _to_dict(details: Mapping[str, str]) -> dict[str, str]:
    return dict(details)


@attrs.frozen
class StepIssue:
    """A recoverable problem a step met. The pipeline goes on; the build report lists it."""

    step: str
    subject: IssueSubject
    code: str
    severity: str = attrs.field(validator=_check_severity)
    message: str
    resolution: IssueResolution | None = None
    details: Mapping[str, str] = attrs.field(factory=dict, converter=_to_dict, eq=False, hash=False)


@attrs.frozen
class StepCleanupPlan:
    """The persistent things a step created, for ``KnowledgeBase.delete()``.

    ``paths`` are relative to the knowledge-base folder (files or folders).
    Raw inputs (``objects/raw/``) never belong here.
    """

    paths: tuple[str, ...] = ()
    description: str = ""


@runtime_checkable
class StepContextProtocol(ComponentAccessProtocol, Protocol):
    """What a step's ``run(context)`` may use; the runner's ``StepContext`` satisfies it.

    Components by key (``get_component``, the spec's API) or typed (``store("vector")``,
    ``embedding_model()``, from ``ComponentAccessProtocol``); artifacts earlier steps set;
    the documents this run builds; issues, statistics and progress for the build report.
    """

    def get_artifact(self, key: str) -> Any: ...

    def set_artifact(self, key: str, value: Any) -> None: ...

    @property
    def root(self) -> Path:
        """The knowledge-base folder."""
        ...

    #: the ids of the documents this run builds (new or changed), in catalog order
    document_ids: list[str]
    #: the build's number, for keys that must not collide with an earlier build's
    run_id: int
    #: statistics shown in the build report; ``count()`` adds to one, a step may also set one (a peak)
    stats: Counter[str]

    def document(self, document_id: str) -> DocumentRecord: ...

    def cache(self, name: str) -> CacheProtocol: ...

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
    ) -> StepIssue: ...

    def describe_asset(self, kind: str, name: str, metadata: Mapping[str, Any]) -> None: ...

    def retry_document(self, document_id: str) -> None: ...

    def count(self, name: str, amount: int = 1) -> None: ...

    def progress(self, description: str, total: int | None = None) -> ProgressHandle: ...

    async def map_batches(
        self, work: BatchWork[B, R], batches: Sequence[B], *, on_result: OnResult | None = None, limit: int | None = None,
    ) -> list[R | BatchFailure]:
        """Run ``work`` over ``batches`` on the recipe's executor (``heta_framework.contracts.executor``): one
        result per batch, in order, or a ``BatchFailure`` where its work raised; ``limit`` bounds the batches in
        flight. The step writes the results (``on_result`` as each batch returns)."""
        ...

    @property
    def executor_in_process(self) -> bool:
        """True when ``map_batches`` runs work in this process (the ``local`` executor)."""
        ...


@runtime_checkable
class KnowledgeStepProtocol(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def requirements(self) -> StepRequirements: ...

    @property
    def capabilities(self) -> StepCapabilities: ...

    async def run(self, context: StepContextProtocol) -> None: ...

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan: ...


@runtime_checkable
class ProcedureProtocol(Protocol):
    """A named bundle of steps (``HetaGraphProcedure``). It only expands; it never runs anything."""

    @property
    def name(self) -> str: ...

    def expand(self) -> list[KnowledgeStepProtocol]: ...
