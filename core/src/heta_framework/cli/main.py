"""``heta``: the command line over knowledge-base folders.

Every command works on the folder given by ``--kb`` (default ``./heta-kb``, or the
``HETA_KB`` environment variable) and takes ``--json``. Mistakes a user can fix (a bad
option, an unknown mode, a missing folder) print one ``Error:`` line and exit with
status 2; a traceback means a bug in Heta or a plugin.

The commands live beside this file, grouped by what they work on: ``setup.py`` (plugins,
init, validate), ``documents.py`` (build, documents, remove, delete), ``querying.py``
(modes, query).
"""

from __future__ import annotations

import logging
from typing import Any

import click

from heta_framework.cli.output import UserError
from heta_framework.errors import HetaError


class HetaGroup(click.Group):
    """Turns Heta's own errors (whose messages say what to do) into a clean exit instead of a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except HetaError as exc:
            raise UserError(str(exc)) from None


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from heta_framework.cli.setup import versions

    for name, version in versions():
        click.echo(f"{name} {version}")
    ctx.exit()


@click.group(cls=HetaGroup)
@click.option("--kb", "kb_path", default="heta-kb", envvar="HETA_KB", show_default=True, help="Knowledge-base folder.")
@click.option("-v", "--verbose", is_flag=True, help="Log what happens.")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version, help="Show the core's and every plugin's version.")
@click.pass_context
def cli(ctx: click.Context, kb_path: str, verbose: bool) -> None:
    """Build knowledge bases from documents and query them."""
    from heta_framework.distribution import check_core_distribution

    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        check_core_distribution()
    except HetaError as exc:
        raise UserError(str(exc)) from None
    from heta_framework.cli.telemetry import export_spans_if_configured

    export_spans_if_configured()  # OTEL_EXPORTER_OTLP_ENDPOINT: spans go there (docs/observability.md)
    ctx.obj = {"kb": kb_path}


def _register_commands() -> None:
    from heta_framework.cli import documents, evaluating, querying, serving, setup, wiki

    for module in (setup, documents, querying, evaluating, serving, wiki):
        for command in module.COMMANDS:
            cli.add_command(command)


_register_commands()


def main() -> None:
    cli(standalone_mode=True)


if __name__ == "__main__":
    main()
