"""``heta``: plugins, init, build, modes, query, delete.

Every command works on the knowledge-base folder given by ``--kb`` (default
``./heta-kb``, or the ``HETA_KB`` environment variable).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from heta_framework.errors import HetaError
from heta_framework.plugins.registry import PluginRegistry

console = Console()
err_console = Console(stderr=True)



def _registry(strict: bool = False) -> PluginRegistry:
    return PluginRegistry.from_entry_points(strict=strict)


def _load(kb_path: str):
    from heta_framework.kb import KnowledgeBase

    return KnowledgeBase.load(kb_path, registry=_registry())


@click.group()
@click.option("--kb", "kb_path", default="heta-kb", envvar="HETA_KB", show_default=True, help="Knowledge-base folder.")
@click.option("-v", "--verbose", is_flag=True, help="Log what happens.")
@click.pass_context
def cli(ctx: click.Context, kb_path: str, verbose: bool) -> None:
    """Build knowledge bases from documents and query them."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    ctx.obj = {"kb": kb_path}


@cli.command()
@click.option("--strict", is_flag=True, help="Fail on the first plugin that does not load.")
def plugins(strict: bool) -> None:
    """Installed plugins, their versions and what each registers; and those that failed."""
    registry = _registry(strict=strict)
    table = Table(title="Heta plugins")
    for column in ("plugin", "distribution", "version", "registers"):
        table.add_column(column)
    for info in registry.plugins:
        registers = "\n".join(f"{category}: {', '.join(names)}" for category, names in info.registered.items())
        table.add_row(info.name, info.distribution, info.version, registers)
    console.print(table)
    if registry.failed:
        failed = Table(title="Plugins that failed to load", style="red")
        for column in ("plugin", "distribution", "reason", "error"):
            failed.add_column(column)
        for item in registry.failed:
            failed.add_row(item.name, item.distribution, item.reason, item.error)
        console.print(failed)


@cli.command()
@click.option("--recipe", "recipe_file", type=click.Path(dir_okay=False), help="Use this recipe file instead of the starter recipe.")
@click.pass_obj
def init(obj: dict, recipe_file: str | None) -> None:
    """Create the knowledge-base folder with a recipe (the starter recipe by default)."""
    from heta_framework.kb import KnowledgeBase, Recipe
    from heta_framework.kb.starter import starter_recipe_toml

    registry = _registry()
    text = Path(recipe_file).read_text(encoding="utf-8") if recipe_file else starter_recipe_toml(registry)
    recipe = Recipe.from_toml(text, registry)
    KnowledgeBase.create(obj["kb"], recipe, registry=registry)
    console.print(f"Created knowledge base at [bold]{obj['kb']}[/]. Next: heta --kb {obj['kb']} build PATH...")


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--rebuild", is_flag=True, help="Run every document through every step again.")
@click.pass_obj
def build(obj: dict, paths: tuple[str, ...], rebuild: bool) -> None:
    """Add documents (files or folders) and build; an interrupted build resumes."""
    from heta_framework.cli.progress import RichProgress, make_progress

    kb = _load(obj["kb"])
    with make_progress() as progress:
        report = asyncio.run(kb.build([Path(p) for p in paths], rebuild=rebuild, progress=RichProgress(progress)))
    console.print(report.to_text(), markup=False, highlight=False)
    kb.close()


@cli.command()
@click.pass_obj
def modes(obj: dict) -> None:
    """Available query modes, and why the others are not."""
    kb = _load(obj["kb"])
    table = Table(title="Query modes")
    table.add_column("mode")
    table.add_column("status")
    table.add_column("provided by")
    available = set(kb.available_queries)
    unavailable = kb.unavailable_queries()
    for mode in kb.query_engines.modes:
        status = "[green]available[/]" if mode in available else "[yellow]unavailable[/]: " + "; ".join(unavailable.get(mode, []))
        table.add_row(mode, status, kb.query_engines.provider_of(mode))
    console.print(table)


@cli.command()
@click.argument("text")
@click.option("--mode", "-m", default=None, help="Query mode (default: the best available).")
@click.option("--top-k", "-k", default=5, show_default=True, type=int)
@click.option("--filter", "filters", multiple=True, help="key=value metadata filter; repeat for more.")
@click.option("--option", "options", multiple=True, help="key=JSON engine option, e.g. rrf_k=60; repeat for more.")
@click.option("--answer", is_flag=True, help="Ask the language model for a grounded answer.")
@click.option("--trace", is_flag=True, help="Include the query trace.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def query(obj: dict, text: str, mode: str | None, top_k: int, filters: tuple[str, ...], options: tuple[str, ...], answer: bool, trace: bool, as_json: bool) -> None:
    """Query the knowledge base."""
    from heta_framework.cli.render import render_response, response_to_dict

    kb = _load(obj["kb"])
    parsed_filters = dict(item.split("=", 1) for item in filters)
    parsed_options = {key: _json_or_text(value) for key, value in (item.split("=", 1) for item in options)}
    if answer:
        parsed_options["answer"] = True
    response = asyncio.run(kb.query(text, mode=mode, top_k=top_k, filters=parsed_filters, options=parsed_options, trace=trace))
    if as_json:
        click.echo(json.dumps(response_to_dict(response), ensure_ascii=False, indent=2))
    else:
        render_response(console, mode or "(default)", response)
    kb.close()


def _json_or_text(value: str):
    try:
        return json.loads(value)
    except json.JSONDecodeError:
        return value


@cli.command()
@click.option("--dry-run", is_flag=True, help="Only list what would be removed.")
@click.pass_obj
def delete(obj: dict, dry_run: bool) -> None:
    """Remove everything the build created (raw inputs and the recipe are kept)."""
    kb = _load(obj["kb"])
    plan = kb.delete(dry_run=dry_run)
    verb = "Would remove" if dry_run else "Removed"
    for path in plan.paths:
        console.print(f"{verb} {path}")
    console.print(f"Kept: {', '.join(plan.kept)}")


def main() -> None:
    try:
        cli(standalone_mode=True)
    except HetaError as exc:
        err_console.print(f"[red]error:[/] {exc}")
        sys.exit(2)


if __name__ == "__main__":
    main()
