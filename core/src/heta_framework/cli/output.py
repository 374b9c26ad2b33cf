"""How the ``heta`` command prints: rich tables on a terminal, JSON with ``--json``, plain errors.

Messages that come from Heta (errors, issues, paths) are printed without rich markup, so a
``[models.embedding]`` in a message stays on screen. Piped output is not wrapped at 80
columns: a table row stays one line for ``grep``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

#: wide enough that a piped table row never wraps
PIPED_WIDTH = 4096


def console(*, stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() or os.environ.get("COLUMNS") else PIPED_WIDTH
    return Console(stderr=stderr, width=width, highlight=False)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def print_plain(text: str, *, stderr: bool = False) -> None:
    """Text from Heta or the user (never interpreted as markup)."""
    console(stderr=stderr).print(text, markup=False, highlight=False, soft_wrap=True)


def table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    """A table whose cells are plain text (markup in them is shown, not interpreted)."""
    from rich.text import Text

    grid = Table(title=title)
    for column in columns:
        grid.add_column(column)
    for row in rows:
        grid.add_row(*(Text(cell) for cell in row))
    console().print(grid)


class UserError(click.ClickException):
    """A mistake the user can fix: printed as one ``Error:`` line, exit status 2, no traceback."""

    exit_code = 2
