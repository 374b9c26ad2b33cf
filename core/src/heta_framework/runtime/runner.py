"""The recipe runner: validate every requirement first, then run steps, persisting after each.

Validation reports *all* problems at once, before any step runs. Running
records each step's status, artifacts, issues and statistics in the run record
after the step returns and its stores are flushed; a resumed run skips every
step already marked done and hands later steps the artifacts it recorded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from heta_framework.common import tracing
from heta_framework.common.memory import release_freed_memory
from heta_framework.common.secrets import redact
from heta_framework.common.usage import metering, usage_attributes
from heta_framework.contracts.progress import ProgressFactory
from heta_framework.contracts.record import BuildReport, RunRecord, StepReport, issue_from_dict, issue_to_dict
from heta_framework.contracts.steps import KnowledgeStepProtocol
from heta_framework.errors import HetaError, RecipeValidationError, StepFailedError, UnknownNameError
from heta_framework.plugins.known import KNOWN_PROVIDERS
from heta_framework.runtime.step_context import StepContext, StepHost

if TYPE_CHECKING:
    from heta_framework.plugins.registry import PluginRegistry

log = logging.getLogger(__name__)

#: artifacts every build starts with
INITIAL_ARTIFACTS = frozenset({"document_ids"})


class BuildHost(StepHost, Protocol):
    """What the runner needs of the knowledge base it builds (the ``KnowledgeBase`` is one)."""

    run_record: RunRecord

    def flush_stores(self) -> None: ...


def step_key(index: int, step: Any) -> str:
    return f"{index:02d}-{step.name}"


def _artifact_providers(registry: PluginRegistry) -> dict[str, list[str]]:
    """artifact -> names of registered steps that provide it (from default-constructed steps)."""
    providers: dict[str, list[str]] = {}
    for name, cls in registry.items["steps"].items():
        try:
            capabilities = cls().capabilities
        except Exception:
            continue
        for artifact in capabilities.artifacts:
            providers.setdefault(artifact, []).append(name)
    return providers


def validate_steps(
    steps: Sequence[Any],
    *,
    components: Iterable[str],
    registry: PluginRegistry,
    existing_queries: Iterable[str] = (),
    models: dict[str, Any] | None = None,
) -> None:
    """Raise ``RecipeValidationError`` listing every unmet requirement of every step."""
    problems: list[str] = []
    have_components = set(components)
    for key, model in (models or {}).items():
        try:
            provider = registry.model_provider(model.provider, model.kind)
        except UnknownNameError as exc:
            problems.append(f"{key} ({model.model_name}): {exc}")
            continue
        # Resolve the model now (an unknown local model, a bad option) so the build fails before
        # parse and split run; providers create clients without network or weights (lazy).
        try:
            provider.create(model)
        except (HetaError, ValueError, TypeError) as exc:
            problems.append(f"{key} ({model.model_name}): {exc}")
    problems += conflicting_steps(steps)
    artifacts = set(INITIAL_ARTIFACTS)
    queries = set(existing_queries)
    providers: dict[str, list[str]] | None = None
    for index, step in enumerate(steps):
        label = f"step {index} ({getattr(step, 'name', type(step).__name__)})"
        if not isinstance(step, KnowledgeStepProtocol):
            problems.append(f"{label} is not a step: it needs name, requirements, capabilities, run() and cleanup_plan()")
            continue
        requirements = step.requirements
        for ref in sorted(requirements.components):
            if ref.key not in have_components:
                hint = KNOWN_PROVIDERS.get(ref.key) or KNOWN_PROVIDERS.get(f"{ref.kind}.{ref.type}")
                problems.append(f"{label} needs component {ref.key}, which the recipe does not define" + (f"; add {hint}" if hint else ""))
        for artifact in sorted(requirements.artifacts - artifacts):
            providers = providers if providers is not None else _artifact_providers(registry)
            makers = providers.get(artifact)
            where = f"; add step {' or '.join(makers)} before it" if makers else ""
            problems.append(f"{label} needs artifact {artifact!r}, which no earlier step provides{where}")
        for query in sorted(requirements.queries - queries):
            hint = KNOWN_PROVIDERS.get(query)
            problems.append(f"{label} needs query mode {query!r}, which no earlier step provides" + (f" ({hint})" if hint else ""))
        capabilities = step.capabilities
        artifacts |= set(capabilities.artifacts)
        queries |= set(capabilities.queries)
    if problems:
        raise RecipeValidationError(problems)


def documents_to_retry(run: dict[str, Any]) -> set[str]:
    """The documents some step of ``run`` asked to run again on the next build (``StepContext.retry_document``)."""
    return {document_id for state in run["steps"].values() for document_id in state.get("retry_documents", ())}


def conflicting_steps(steps: Sequence[Any]) -> list[str]:
    """Steps that would overwrite each other's output: the same step twice, or two steps publishing one search asset.

    Rejected rather than given an order-dependent meaning: the later step would silently replace what the
    earlier one wrote (``split_documents`` twice, ``persist_chunks`` twice, ``build_graph`` beside
    ``merge_graph_into_store``, which both write the graph tables).
    """
    problems: list[str] = []
    first_by_name: dict[str, int] = {}
    first_by_asset: dict[tuple[str, str], tuple[int, str]] = {}
    for index, step in enumerate(steps):
        name = getattr(step, "name", None)
        if not isinstance(name, str) or not isinstance(step, KnowledgeStepProtocol):
            continue
        if name in first_by_name:
            problems.append(
                f"step {index} ({name}) repeats step {first_by_name[name]} ({name}): the second would overwrite the "
                "first one's output. Keep one (set its options there)"
            )
            continue
        first_by_name[name] = index
        for asset in step.capabilities.search_assets:
            key = (asset.kind, asset.name)
            if key in first_by_asset:
                other_index, other = first_by_asset[key]
                problems.append(
                    f"steps {other_index} ({other}) and {index} ({name}) both publish search asset {asset.kind}:{asset.name}; "
                    f"keep one of them" + (
                        " (build_graph builds the graph from scratch, merge_graph_into_store merges into an existing one)"
                        if {other, name} == {"build_graph", "merge_graph_into_store"}
                        else ""
                    )
                )
            else:
                first_by_asset[key] = (index, name)
    return problems


async def run_steps(
    kb: BuildHost,
    steps: Sequence[Any],
    run: dict[str, Any],
    *,
    resumed: bool,
    progress: ProgressFactory,
) -> BuildReport:
    record = kb.run_record
    artifacts: dict[str, Any] = {"document_ids": list(run["document_ids"])}
    reports: list[StepReport] = []
    for index, step in enumerate(steps):
        key = step_key(index, step)
        state = run["steps"].setdefault(key, {"status": "pending"})
        if state["status"] == "done":
            artifacts.update(state.get("artifacts", {}))
            reports.append(
                StepReport(key, step.name, "skipped", 0.0, tuple(issue_from_dict(i) for i in state.get("issues", [])), dict(state.get("stats", {})))
            )
            continue
        context = StepContext(
            knowledge_base=kb, step_name=step.name, artifacts=artifacts, run_id=run["id"],
            document_ids=list(run["document_ids"]), progress=progress,
        )
        state.update(status="running", started=time.time())
        record.save()
        started = time.perf_counter()
        log.info("step %s started", step.name)
        attributes = {"heta.kb": kb.path.name, "heta.step": step.name, "heta.step.index": index, "heta.build.run": run["id"],
                      "heta.build.documents": len(run["document_ids"])}
        with tracing.span(f"heta.step {step.name}", attributes) as span, metering() as meter:
            try:
                await step.run(context)
                kb.flush_stores()
                release_freed_memory()  # what the step built and dropped: otherwise each step's heap stays resident
            except Exception as exc:
                message = redact(f"{type(exc).__name__}: {exc}", *kb.secrets())
                state.update(status="failed", error=message, issues=[issue_to_dict(i) for i in context.issues])
                run["status"] = "failed"
                record.save()
                raise StepFailedError(
                    f"Step {step.name!r} failed: {message}\n"
                    "The knowledge base is still readable. Fix the cause and run the build again: "
                    "finished steps and documents are not redone."
                ) from exc
            usage = meter.to_dict()
            tracing.set_attributes(span, {"heta.step.issues": len(context.issues), **usage_attributes(usage)})
        seconds = time.perf_counter() - started
        artifacts.update(context.produced)
        capabilities = step.capabilities
        state.update(
            status="done",
            finished=time.time(),
            seconds=round(seconds, 3),
            artifacts=context.produced,
            issues=[issue_to_dict(i) for i in context.issues],
            stats=dict(context.stats),
            retry_documents=sorted(context.retry_documents),
        )
        assets = [
            attrs.evolve(asset, metadata={**asset.metadata, **context.asset_metadata.get((asset.kind, asset.name), {})})
            for asset in capabilities.search_assets
        ]
        record.add_capabilities(step.name, assets, capabilities.queries, capabilities.artifacts, context.produced)
        record.save()
        reports.append(StepReport(key, step.name, "done", seconds, tuple(context.issues), dict(context.stats), usage))
        log.info("step %s done in %.2fs with %d issue(s)", step.name, seconds, len(context.issues))
    return BuildReport(run_id=run["id"], document_count=len(run["document_ids"]), steps=tuple(reports), resumed=resumed)
