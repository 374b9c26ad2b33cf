"""``evaluate(...)``: the Python API behind ``heta eval``.

It builds (or reuses) one knowledge base per recipe from the set's documents, runs every
mode, and writes ``results.jsonl`` (one line per query, the resume state),
``summary.json`` and ``chart.png`` into the output folder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from heta_framework.errors import EvaluationError
from heta_framework.evaluation.chart import CHART_FILE, draw_chart
from heta_framework.evaluation.datasets import EvalQuery, EvalSet
from heta_framework.evaluation.report import ModeSummary, report_dict, summarize, write_summary
from heta_framework.evaluation.runner import RESULTS_FILE, Target, run_evaluation
from heta_framework.runtime.step_context import ProgressFactory, no_progress

SELF = "self"


@attrs.frozen
class EvaluationResult:
    summaries: tuple[ModeSummary, ...] = attrs.field(converter=tuple)
    report: Mapping[str, Any]
    results_file: Path
    summary_file: Path
    chart_file: Path | None = None


async def prepare_knowledge_base(folder: Path, recipe: Any, documents: Sequence[Any], *, registry: Any = None,
                                 progress: ProgressFactory = no_progress) -> Any:
    """Open the knowledge base at ``folder`` (made for ``recipe`` if missing) and build ``documents`` into it.

    A folder built earlier is reused: unchanged documents are not built again.
    """
    from heta_framework.kb import KnowledgeBase
    from heta_framework.kb.knowledge_base import RECIPE_FILE

    if (folder / RECIPE_FILE).exists():
        kb = KnowledgeBase.load(folder, registry=registry)
        if kb.recipe.to_toml() != recipe.to_toml():
            kb.close()
            raise EvaluationError(
                f"{folder} was built with another recipe. Remove that folder, or choose another output folder, to evaluate this recipe."
            )
    else:
        kb = KnowledgeBase.create(folder, recipe, registry=registry)
    if documents:
        await kb.build(documents, progress=progress)
    return kb


def self_evaluation_set(kb: Any, count: int = 200) -> EvalSet:
    """Pseudo-queries from ``kb``'s own chunks: the ones the fusion calibration makes (one per sampled document).

    One implementation for both (heta_framework.builtin.engines.calibration.pseudo_queries): some of a
    chunk's longer words, shuffled (a character span for Chinese or Japanese text); its document is the answer.
    """
    from heta_framework.builtin.engines.calibration import MIN_DOCUMENTS, pseudo_queries

    found = pseudo_queries(kb, limit=count)
    if not found:
        raise EvaluationError(
            f"{kb.path} has too few chunks to make pseudo-queries from (at least {MIN_DOCUMENTS} documents are needed). "
            "Build more documents into it (heta build PATH), or give a labelled set."
        )
    queries = [EvalQuery(id=f"pseudo-{number}", text=q.text, relevance={q.document_id: 1.0}) for number, q in enumerate(found)]
    return EvalSet(name="self", queries=queries)


async def evaluate(
    eval_set: EvalSet | str,
    output: Path | str,
    *,
    knowledge_bases: Mapping[str, Any] | None = None,
    recipes: Mapping[str, Any] | None = None,
    documents: Sequence[Any] = (),
    modes: Sequence[str] = (),
    k: int = 10,
    answer: bool = False,
    fresh: bool = False,
    chart: bool = True,
    self_queries: int = 200,
    registry: Any = None,
    progress: ProgressFactory = no_progress,
) -> EvaluationResult:
    """Score every mode of every knowledge base on ``eval_set``.

    ``knowledge_bases`` (name -> open ``KnowledgeBase``) are evaluated as they are;
    ``recipes`` (name -> ``Recipe``) each get a knowledge base in ``output/kb-<name>``,
    built from the set's own documents plus ``documents`` (files, folders or
    ``SourceDocument``s). ``eval_set="self"`` makes pseudo-queries from the first
    knowledge base's chunks. Finished queries found in ``output/results.jsonl`` are not
    run again unless ``fresh``.
    """
    if k < 1:
        raise EvaluationError(f"k must be at least 1, got {k}.")
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    targets = [Target(name, kb) for name, kb in (knowledge_bases or {}).items()]
    opened: list[Any] = []
    try:
        if recipes:
            sources = [*(eval_set.documents if isinstance(eval_set, EvalSet) else ()), *documents]
            for name, recipe in recipes.items():
                kb = await prepare_knowledge_base(output / f"kb-{name}", recipe, sources, registry=registry, progress=progress)
                opened.append(kb)
                targets.append(Target(name, kb))
        if not targets:
            raise EvaluationError("Nothing to evaluate: give knowledge_bases or recipes (heta eval: --kb or --recipe).")
        if isinstance(eval_set, str):
            if eval_set != SELF:
                raise EvaluationError(f"Unknown evaluation set {eval_set!r}: load one (load_dataset) or pass {SELF!r}.")
            eval_set = self_evaluation_set(targets[0].kb, count=self_queries)
        if not eval_set.queries:
            raise EvaluationError(f"The evaluation set {eval_set.name!r} has no queries.")
        rows, notes = await run_evaluation(eval_set, targets, output, modes=modes, k=k, answer=answer, fresh=fresh, progress=progress)
    finally:
        for kb in opened:
            kb.close()
    summaries = summarize(rows)
    report = report_dict(eval_set.name, k, summaries, notes)
    chart_file = draw_chart(summaries, output / CHART_FILE, title=f"{eval_set.name}: quality against latency") if chart else None
    report["files"] = {"results": str(output / RESULTS_FILE), "chart": str(chart_file) if chart_file else None}
    summary_file = write_summary(output, report)
    return EvaluationResult(summaries, report, output / RESULTS_FILE, summary_file, chart_file)
