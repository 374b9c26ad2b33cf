"""``heta eval``: score query modes and recipes on an evaluation set (heta_framework.evaluation)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from heta_framework.cli.common import registry
from heta_framework.cli.output import UserError, emit_json, print_plain, table

STARTER = "starter"


def _recipes(names: tuple[str, ...], plugin_registry: Any) -> dict[str, Any]:
    """``--recipe`` values: recipe TOML files (named by their stem) or ``starter``."""
    from heta_framework.kb import Recipe
    from heta_framework.runtime.starter import starter_recipe_toml

    recipes: dict[str, Any] = {}
    for value in names:
        if value == STARTER:
            name, recipe = STARTER, Recipe.from_toml(starter_recipe_toml(plugin_registry), plugin_registry)
        else:
            path = Path(value)
            if not path.is_file():
                raise UserError(f"--recipe {value}: no such recipe file. Give a recipe TOML file, or {STARTER} for the starter recipe.")
            name, recipe = path.stem, Recipe.load(path, plugin_registry)
        if name in recipes:
            raise UserError(f"Two recipes are named {name!r}: rename one file (results are kept under the file's name).")
        recipes[name] = recipe
    return recipes


def _eval_set(dataset: str, fmt: str | None, split: str, limit: int | None) -> Any:
    from heta_framework.evaluation import load_dataset
    from heta_framework.evaluation.api import SELF

    if dataset == SELF:
        return SELF
    loaded = load_dataset(dataset, format=fmt, split=split, count=limit or 1000)
    if limit is not None:
        import attrs

        loaded = attrs.evolve(loaded, queries=loaded.queries[:limit])
    return loaded


@click.command("eval")
@click.argument("dataset")
@click.option("--format", "fmt", type=click.Choice(["beir", "jsonl", "multihop-rag", "wikipedia"]), default=None,
              help="The set's format (default: told from DATASET: a folder is BEIR, .jsonl, .json is MultiHop-RAG, wikipedia[:LANG]; self = pseudo-queries).")
@click.option("--split", default="test", show_default=True, help="BEIR qrels split (qrels/SPLIT.tsv).")
@click.option("--mode", "-m", "modes", multiple=True, help="A mode to evaluate; repeat for more (default: every available mode).")
@click.option("--recipe", "-r", "recipe_names", multiple=True, help=f"A recipe TOML file, or {STARTER}; repeat to compare (default: the --kb folder as it is).")
@click.option("--documents", "document_paths", multiple=True, type=click.Path(exists=True),
              help="Files or folders to build each recipe's knowledge base from (besides the set's own corpus).")
@click.option("-k", "--top-k", "k", default=10, show_default=True, type=click.IntRange(min=1), help="Cut-off of every metric (nDCG@k, ...).")
@click.option("--queries", "limit", type=click.IntRange(min=1), default=None, help="Use only the first N queries (Wikipedia and self: make N).")
@click.option("--answer", is_flag=True, help="Ask each mode for an answer and score it (needs a language model).")
@click.option("--out", "out", default="heta-eval", show_default=True, type=click.Path(file_okay=False),
              help="Folder for results.jsonl, summary.json, chart.png and the recipes' knowledge bases.")
@click.option("--fresh", is_flag=True, help="Forget the results of an earlier run in --out instead of resuming it.")
@click.option("--no-chart", is_flag=True, help="Do not draw chart.png (it needs matplotlib: pip install 'heta-core[eval]').")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (no progress bar).")
@click.pass_obj
def eval_command(obj: dict, dataset: str, fmt: str | None, split: str, modes: tuple[str, ...], recipe_names: tuple[str, ...],
                 document_paths: tuple[str, ...], k: int, limit: int | None, answer: bool, out: str, fresh: bool, no_chart: bool,
                 as_json: bool) -> None:
    """Score query modes (and recipes) on an evaluation set: a table, summary.json and chart.png; a killed run resumes."""
    from heta_framework.evaluation import evaluate
    from heta_framework.kb import KnowledgeBase
    from heta_framework.kb.knowledge_base import RECIPE_FILE

    plugin_registry = registry()
    eval_set = _eval_set(dataset, fmt, split, limit)
    documents = [Path(p) for p in document_paths]
    set_documents = getattr(eval_set, "documents", ())
    recipes = _recipes(recipe_names, plugin_registry)
    knowledge_bases: dict[str, Any] = {}
    kb_folder = Path(obj["kb"])
    if not recipes:
        if (kb_folder / RECIPE_FILE).exists() and not documents:
            knowledge_bases[kb_folder.name or "kb"] = KnowledgeBase.load(kb_folder, registry=plugin_registry)
        elif documents or set_documents:
            recipes = _recipes((STARTER,), plugin_registry)
        else:
            raise UserError(
                f"Nothing to evaluate: {kb_folder} holds no knowledge base. Give --kb FOLDER, or --recipe FILE with --documents PATH."
            )
    if not no_chart:
        from heta_framework.evaluation.chart import _pyplot

        _pyplot()  # a missing extra fails now, not after the whole run

    async def run(progress: Any) -> Any:
        try:
            return await evaluate(eval_set, out, knowledge_bases=knowledge_bases, recipes=recipes, documents=documents, modes=modes,
                                  k=k, answer=answer, fresh=fresh, chart=not no_chart, self_queries=limit or 200,
                                  registry=plugin_registry, progress=progress)
        finally:
            for kb in knowledge_bases.values():
                kb.close()

    if as_json:
        from heta_framework.runtime.step_context import no_progress

        result = asyncio.run(run(no_progress))
        emit_json(result.report)
        return
    from heta_framework.cli.progress import RichProgress, make_progress

    with make_progress() as progress:
        result = asyncio.run(run(RichProgress(progress)))
    _print_report(result)


def _print_report(result: Any) -> None:
    from heta_framework.evaluation.report import table_rows

    report = result.report
    columns, rows = table_rows(result.summaries)
    table(f"{report['dataset']}, k={report['k']}", columns, rows)
    for recipe, skipped in report.get("skipped", {}).items():
        for mode, reason in skipped.items():
            print_plain(f"Skipped {mode} ({recipe}): {reason}")
    for summary in result.summaries:
        if summary.errors:
            print_plain(f"{summary.errors} of {summary.queries} queries failed in {summary.mode} ({summary.recipe}), e.g.: {summary.first_error}")
    for recipe, names in report.get("unmatched_gold", {}).items():
        print_plain(f"Warning: {len(names)} gold document name(s) match no document of {recipe}, e.g. {names[0]!r}: those queries cannot score.")
    totals = report.get("usage", {}).get("totals", {})
    if totals.get("model_calls"):
        cost = f", cost {totals['cost']:.4f}" if "cost" in totals else ""
        print_plain(
            f"Model usage: {totals['model_calls']} call(s) ({totals['llm_calls']} to language models), {totals['prompt_tokens']} prompt + "
            f"{totals['completion_tokens']} completion token(s), {totals['embedded_texts']} text(s) embedded{cost}."
        )
    if report.get("resumed"):
        print_plain(f"Resumed: {report['resumed']} result(s) from an earlier run were kept (--fresh starts again).")
    print_plain(f"Wrote {result.summary_file}" + (f" and {result.chart_file}" if result.chart_file else ""))


COMMANDS = (eval_command,)
