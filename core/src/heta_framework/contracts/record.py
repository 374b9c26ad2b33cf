"""The run record: what each build ran, produced and ran into, persisted atomically.

The run record holds every run's per-step status, artifacts, issues and
statistics, plus the capabilities and search assets the knowledge base has. It
is saved through the knowledge base's state (``run_record.json`` in the folder,
written then renamed; a table row on a server) after every step, so a crash
leaves the last finished step recorded and the build resumable.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs
import cattrs

from heta_framework.contracts.search import SearchAsset
from heta_framework.contracts.steps import StepIssue
from heta_framework.errors import KnowledgeBaseError

if TYPE_CHECKING:
    from heta_framework.contracts.state import KnowledgeBaseState

FORMAT_VERSION = 1
_converter = cattrs.Converter()


def issue_to_dict(issue: StepIssue) -> dict[str, Any]:
    return _converter.unstructure(issue)


def issue_from_dict(data: dict[str, Any]) -> StepIssue:
    return _converter.structure(data, StepIssue)


def asset_to_dict(asset: SearchAsset) -> dict[str, Any]:
    return {"kind": asset.kind, "name": asset.name, "store": asset.store, "metadata": dict(asset.metadata)}


def asset_from_dict(data: dict[str, Any]) -> SearchAsset:
    return SearchAsset(**data)


class RunRecord:
    """A thin, typed view over the run record's JSON value; every mutation is followed by ``save()``."""

    def __init__(self, state: KnowledgeBaseState, data: dict[str, Any]):
        self.state = state
        self.data = data
        # every query asks for the assets; parse them again only when the stored list is replaced
        self._assets_parsed_from: list[dict[str, Any]] | None = None
        self._assets: tuple[SearchAsset, ...] = ()

    @classmethod
    def open(cls, state: KnowledgeBaseState) -> RunRecord:
        data = state.read_run_record()
        if data is None:
            data = {"format": FORMAT_VERSION, "runs": [], "search_assets": [], "queries": [], "artifacts": [], "step_artifacts": {}}
        elif data.get("format") != FORMAT_VERSION:
            raise KnowledgeBaseError(
                f"The run record of {getattr(state, 'location', state)} has format {data.get('format')!r}; this Heta "
                f"reads format {FORMAT_VERSION}. Rebuild the knowledge base with this version."
            )
        return cls(state, data)

    def save(self) -> None:
        self.state.write_run_record(self.data)

    # --- runs ----------------------------------------------------------------------

    @property
    def runs(self) -> list[dict[str, Any]]:
        return self.data["runs"]

    @property
    def last_run(self) -> dict[str, Any] | None:
        return self.runs[-1] if self.runs else None

    def start_run(self, document_ids: list[str], step_keys: list[str]) -> dict[str, Any]:
        run = {
            "id": len(self.runs) + 1,
            "status": "running",
            "started": time.time(),
            "finished": None,
            "document_ids": document_ids,
            "steps": {key: {"status": "pending"} for key in step_keys},
        }
        self.runs.append(run)
        self.save()
        return run

    # --- what the knowledge base can do ----------------------------------------------

    @property
    def search_assets(self) -> list[SearchAsset]:
        stored = self.data["search_assets"]
        if stored is not self._assets_parsed_from:
            self._assets = tuple(asset_from_dict(a) for a in stored)
            self._assets_parsed_from = stored
        return list(self._assets)

    @property
    def assets_token(self) -> object:
        """A new object whenever the published assets change (``add_capabilities`` replaces the list):
        hold it and compare with ``is`` to know a cached answer about the assets is still right."""
        return self.data["search_assets"]

    @property
    def queries(self) -> set[str]:
        return set(self.data["queries"])

    @property
    def artifacts(self) -> set[str]:
        return set(self.data.get("artifacts", []))

    def add_capabilities(self, step_name: str, assets: Iterable[SearchAsset], queries: Iterable[str], artifacts: Iterable[str], produced: dict[str, Any]) -> None:
        # a re-published asset replaces the old description (a rebuild may use another model or analyzer)
        published = {(a.kind, a.name): asset_to_dict(a) for a in assets}
        kept = [a for a in self.data["search_assets"] if (a["kind"], a["name"]) not in published]
        self.data["search_assets"] = kept + list(published.values())
        self.data["queries"] = sorted(set(self.data["queries"]) | set(queries))
        self.data["artifacts"] = sorted(set(self.data.get("artifacts", [])) | set(artifacts))
        self.data["step_artifacts"].setdefault(step_name, {}).update(produced)

    def all_issues(self) -> list[StepIssue]:
        return [
            issue_from_dict(i)
            for run in self.runs
            for step in (run.get("ingest", {}), *run["steps"].values())
            for i in step.get("issues", [])
        ]


@attrs.frozen
class StepReport:
    key: str
    name: str
    status: str
    seconds: float
    issues: tuple[StepIssue, ...]
    stats: dict[str, Any]
    #: the model calls the step made, by model (``heta_framework.common.usage``); empty for a skipped step
    usage: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class BuildReport:
    """What a build ran, produced, and every ``StepIssue`` it met."""

    run_id: int
    document_count: int
    steps: tuple[StepReport, ...]
    resumed: bool = False
    #: the source walk before the steps: files skipped (hidden, unreadable, FIFO, ...), duplicates, pruned documents
    ingest: StepReport | None = None
    #: where the fanned-out work ran: the executor's name, tasks, failed and retried batches, tasks per worker
    executor: Mapping[str, Any] = attrs.field(factory=dict)
    #: the model calls of the whole run, by model, with totals (and a cost where the recipe gives prices)
    usage: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def issues(self) -> list[StepIssue]:
        ingest = self.ingest.issues if self.ingest is not None else ()
        return [*ingest, *(issue for step in self.steps for issue in step.issues)]

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``heta build --json`` prints."""
        return {
            "run_id": self.run_id,
            "document_count": self.document_count,
            "resumed": self.resumed,
            "steps": [
                {"key": s.key, "name": s.name, "status": s.status, "seconds": round(s.seconds, 3), "stats": dict(s.stats),
                 "issues": [issue_to_dict(i) for i in s.issues], "usage": dict(s.usage)}
                for s in self.steps
            ],
            "ingest": None if self.ingest is None else {
                "seconds": round(self.ingest.seconds, 3), "stats": dict(self.ingest.stats),
                "issues": [issue_to_dict(i) for i in self.ingest.issues],
            },
            "issues": len(self.issues),
            "executor": dict(self.executor),
            "usage": dict(self.usage),
        }

    def _document_counts(self) -> str:
        """`` (1 new, 1 changed; 2 unchanged)``: what the sources held, told apart (empty without an ingest walk)."""
        stats = self.ingest.stats if self.ingest is not None else {}
        parts = [f"{stats[key]} {label}" for key, label in (("documents_added", "new"), ("documents_changed", "changed"))
                 if stats.get(key)]
        if not parts and not stats.get("documents_unchanged"):
            return ""
        unchanged = f"{stats.get('documents_unchanged', 0)} unchanged"
        return f" ({', '.join(parts)}; {unchanged})" if parts else f" ({unchanged})"

    def to_text(self) -> str:
        lines = [f"Build run {self.run_id}{' (resumed)' if self.resumed else ''}: {self.document_count} document(s) built{self._document_counts()}"]
        if self.ingest is not None and self.ingest.stats:
            stats = ", ".join(f"{k}={v}" for k, v in self.ingest.stats.items())
            lines.append(f"  {self.ingest.name:<24} {'done':<8} {self.ingest.seconds:7.2f}s  {stats}")
        for step in self.steps:
            stats = ", ".join(f"{k}={v}" for k, v in step.stats.items())
            lines.append(f"  {step.name:<24} {step.status:<8} {step.seconds:7.2f}s  {stats}")
        if self.executor.get("executor", "local") != "local":
            workers = self.executor.get("workers", {})
            lines.append(
                f"  executor {self.executor['executor']}: {self.executor.get('tasks', 0)} task(s) on {len(workers)} worker(s), "
                f"{self.executor.get('retried', 0)} retried, {self.executor.get('failed', 0)} failed"
            )
        if (totals := self.usage.get("totals")) and totals.get("model_calls"):
            cost = f", cost {totals['cost']:.4f}" if "cost" in totals else ""
            lines.append(
                f"  model usage: {totals['model_calls']} call(s), {totals['embedded_texts']} text(s) embedded, "
                f"{totals['prompt_tokens']} prompt + {totals['completion_tokens']} completion token(s){cost}"
            )
        if self.issues:
            lines.append(f"{len(self.issues)} issue(s):")
            for issue in self.issues:
                lines.append(f"  [{issue.severity}] {issue.step}: {issue.code} ({issue.subject.type} {issue.subject.id}): {issue.message}")
        else:
            lines.append("No issues.")
        return "\n".join(lines)
