"""``heta wiki``: a page of heta-plugin-wiki's wiki, as markdown, from the ``--kb`` folder.

A thin command: the pages and their rendering live in ``heta_plugin_wiki``, imported only when the command runs,
so heta-core never depends on it.
"""

from __future__ import annotations

import click

from heta_framework.cli.common import open_kb
from heta_framework.cli.output import UserError, emit_json, print_plain

MISSING_WIKI = "`heta wiki` needs the heta-plugin-wiki distribution: pip install heta-plugin-wiki"


@click.command()
@click.argument("page", default="index")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the page id and its markdown.")
@click.pass_obj
def wiki(obj: dict, page: str, as_json: bool) -> None:
    """Print the wiki page of a document (PAGE: its document id, or wiki:ID), or the index page (the default)."""
    try:
        from heta_plugin_wiki.show import show_page
    except ImportError:
        raise UserError(MISSING_WIKI) from None
    with open_kb(obj["kb"]) as kb:
        try:
            markdown = show_page(kb, page)
        except KeyError as exc:
            raise UserError(str(exc.args[0])) from None
    if as_json:
        emit_json({"page": page, "markdown": markdown})
    else:
        print_plain(markdown.rstrip("\n"))


COMMANDS = (wiki,)
