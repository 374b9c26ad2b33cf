"""From per-query result lines to one summary per (recipe, mode): the table and the JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.common.usage import add_usage
from heta_framework.evaluation.metrics import latency_percentiles_ms, mean

SUMMARY_FILE = "summary.json"


@attrs.frozen
class ModeSummary:
    """How one mode of one recipe did: metric means, latency percentiles, language-model calls per query."""

    recipe: str
    mode: str
    queries: int
    metrics: Mapping[str, float | None]
    p50_ms: float | None
    p95_ms: float | None
    llm_calls_per_query: float | None = None
    errors: int = 0
    first_error: str | None = None
    #: the model calls of the mode's queries, by model, with totals (and cost where the recipe gives prices)
    usage: Mapping[str, Any] = attrs.field(factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @property
    def tokens(self) -> int:
        totals = self.usage.get("totals", {})
        return int(totals.get("prompt_tokens", 0) + totals.get("completion_tokens", 0) + totals.get("embedding_tokens", 0))


def summarize(rows: Iterable[Mapping[str, Any]]) -> list[ModeSummary]:
    """One :class:`ModeSummary` per (recipe, mode), in the order they were first measured."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["recipe"], row["mode"]), []).append(row)
    summaries = []
    for (recipe, mode), group in groups.items():
        measured = [r for r in group if "error" not in r]
        names = list(dict.fromkeys(name for r in measured for name in r.get("metrics", {})))
        metrics = {name: _rounded(mean(r["metrics"].get(name) for r in measured)) for name in names}
        calls = [r["llm_calls"] for r in measured if "llm_calls" in r]
        summaries.append(ModeSummary(
            recipe=recipe,
            mode=mode,
            queries=len(group),
            metrics=metrics,
            **latency_percentiles_ms([r["latency_s"] for r in measured]),
            llm_calls_per_query=round(sum(calls) / len(calls), 3) if calls else None,
            errors=len(group) - len(measured),
            first_error=next((r["error"] for r in group if "error" in r), None),
            usage=add_usage(*(r["usage"] for r in measured if "usage" in r)),
        ))
    return summaries


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def headline_metric(summaries: Sequence[ModeSummary]) -> str | None:
    """The quality the chart plots: nDCG@k when there are document labels, else evidence recall, else answer F1."""
    names = [name for s in summaries for name, value in s.metrics.items() if value is not None]
    for prefix in ("ndcg@", "evidence_recall@", "answer_f1"):
        for name in names:
            if name.startswith(prefix):
                return name
    return None


def table_rows(summaries: Sequence[ModeSummary]) -> tuple[list[str], list[list[str]]]:
    """Columns and cells of the table ``heta eval`` prints (metrics that no mode has are left out)."""
    names = list(dict.fromkeys(name for s in summaries for name, value in s.metrics.items() if value is not None))
    has_calls = any(s.llm_calls_per_query is not None for s in summaries)
    has_tokens = any(s.tokens for s in summaries)
    has_cost = any("cost" in s.usage.get("totals", {}) for s in summaries)
    columns = ["recipe", "mode", "queries", *names, "p50 ms", "p95 ms", *(["LLM calls/query"] if has_calls else []),
               *(["tokens"] if has_tokens else []), *(["cost"] if has_cost else [])]
    rows = []
    for s in summaries:
        cells = [s.recipe, s.mode, str(s.queries) + (f" ({s.errors} failed)" if s.errors else "")]
        cells += [_cell(s.metrics.get(name)) for name in names]
        cells += [_cell(s.p50_ms, 1), _cell(s.p95_ms, 1)]
        if has_calls:
            cells.append(_cell(s.llm_calls_per_query, 2))
        if has_tokens:
            cells.append(str(s.tokens))
        if has_cost:
            cells.append(_cell(s.usage.get("totals", {}).get("cost"), 4))
        rows.append(cells)
    return columns, rows


def _cell(value: float | None, digits: int = 3) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def report_dict(dataset: str, k: int, summaries: Sequence[ModeSummary], notes: Mapping[str, Any]) -> dict[str, Any]:
    usage = add_usage(*(s.usage for s in summaries))
    return {"dataset": dataset, "k": k, "results": [s.to_dict() for s in summaries], "usage": usage, **notes}


def write_summary(folder: Path, report: Mapping[str, Any]) -> Path:
    path = folder / SUMMARY_FILE
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
