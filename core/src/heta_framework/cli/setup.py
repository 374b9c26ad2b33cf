"""``heta plugins``, ``heta init``, ``heta validate`` and ``heta --version``."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import click

from heta_framework import __version__
from heta_framework.cli.common import open_kb, registry
from heta_framework.cli.output import UserError, emit_json, print_plain, table
from heta_framework.distribution import CORE_DISTRIBUTION
from heta_framework.errors import HetaError, RecipeError
from heta_framework.plugins.registry import ENTRY_POINT_GROUP


def versions() -> list[tuple[str, str]]:
    """(distribution, version): the core first, then every distribution with a ``heta`` entry point (none imported)."""
    found = {
        entry_point.dist.name: entry_point.dist.version
        for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP)
        if entry_point.dist is not None
    }
    return [(CORE_DISTRIBUTION, __version__), *sorted(found.items())]


@click.command()
@click.option("--strict", is_flag=True, help="Fail on the first plugin that does not load.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def plugins(strict: bool, as_json: bool) -> None:
    """Installed plugins, their versions and what each registers; and those that failed."""
    plugin_registry = registry(strict=strict)
    if as_json:
        emit_json({
            "plugins": [
                {"name": p.name, "distribution": p.distribution, "version": p.version, "registers": p.registered}
                for p in plugin_registry.plugins
            ],
            "failed": [
                {"name": f.name, "distribution": f.distribution, "reason": f.reason, "error": f.error} for f in plugin_registry.failed
            ],
        })
        return
    rows = [
        [p.name, p.distribution, p.version, "\n".join(f"{category}: {', '.join(names)}" for category, names in p.registered.items())]
        for p in plugin_registry.plugins
    ]
    table("Heta plugins", ["plugin", "distribution", "version", "registers"], rows)
    if plugin_registry.failed:
        failed = [[f.name, f.distribution, f.reason, f.error] for f in plugin_registry.failed]
        table("Plugins that failed to load", ["plugin", "distribution", "reason", "error"], failed)


@click.command()
@click.option("--recipe", "recipe_file", type=click.Path(dir_okay=False, exists=True), help="Use this recipe file instead of the starter recipe.")
@click.option("--backend", type=click.Choice(["folder", "postgres"]), default="folder", show_default=True,
              help="Where the starter recipe keeps the stores: files in the folder, or PostgreSQL ($HETA_POSTGRES_DSN).")
@click.option("--multilingual", is_flag=True, help="Starter recipe with local/multilingual-e5-small (documents not in English).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def init(obj: dict, recipe_file: str | None, backend: str, multilingual: bool, as_json: bool) -> None:
    """Create the knowledge-base folder with a recipe (the starter recipe by default)."""
    from heta_framework.kb import KnowledgeBase, Recipe
    from heta_framework.kb.knowledge_base import RECIPE_FILE
    from heta_framework.runtime.starter import starter_recipe_toml

    folder = Path(obj["kb"])
    if (folder / RECIPE_FILE).exists():
        raise UserError(
            f"{folder} already holds a knowledge base. Build it with `heta --kb {folder} build FOLDER`, "
            f"edit {folder / RECIPE_FILE}, or choose another folder with --kb."
        )
    plugin_registry = registry()
    if recipe_file and (backend != "folder" or multilingual):
        raise UserError("--backend and --multilingual shape the starter recipe; with --recipe FILE, write them in the file.")
    text = (Path(recipe_file).read_text(encoding="utf-8") if recipe_file
            else starter_recipe_toml(plugin_registry, backend=backend, multilingual=multilingual))
    recipe = Recipe.from_toml(text, plugin_registry)
    KnowledgeBase.create(folder, recipe, registry=plugin_registry)
    if as_json:
        emit_json({"path": str(folder), "recipe": recipe.summary()})
    else:
        print_plain(f"Created knowledge base at {folder}. Next: heta --kb {folder} build PATH...")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
def validate(obj: dict, as_json: bool) -> None:
    """Check the recipe and the plugins it needs; exit status 1 listing every problem."""
    problems = [f"plugin {f.name!r} from {f.distribution} did not load ({f.reason}): {f.error}" for f in registry().failed]
    try:
        with open_kb(obj["kb"]) as kb:
            problems += kb.validate()
    except RecipeError as exc:
        problems.extend(getattr(exc, "problems", None) or [str(exc)])  # "N problem(s)" then N lines
    except HetaError as exc:  # no knowledge base at all: a usage error, not a recipe problem
        raise UserError(str(exc)) from None
    if as_json:
        emit_json({"valid": not problems, "problems": problems})
    elif problems:
        print_plain(f"{len(problems)} problem(s):", stderr=True)
        for problem in problems:
            print_plain(f"  - {problem}", stderr=True)
    else:
        print_plain(f"{obj['kb']}: the recipe is valid and every plugin it needs is installed.")
    if problems:
        raise click.exceptions.Exit(1)


COMMANDS = (plugins, init, validate)
