"""The readable rendering of a ``QueryResponse`` (``--json`` prints ``QueryResponse.to_dict()`` instead)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from heta_framework.contracts.search import QueryResponse


def render_response(console: Console, mode: str, response: QueryResponse, width: int = 160) -> None:
    # text from documents, models and issues is escaped: a "[1]" or "[models.language]" in it must show
    console.print(f"[dim]mode {escape(mode)}[/]")
    if response.answer:
        console.print(f"[bold]Answer:[/] {escape(response.answer)}")
    if not response.results:
        console.print("  (no results)")
    for rank, result in enumerate(response.results, start=1):
        where = result.location  # the file name, and page, sheet, table and rows where known
        snippet = " ".join(result.text.split())[:width]
        console.print(f"  {rank}. [cyan]{escape(result.kind)}[/] {result.score:.4f} [dim]{escape(where)}[/]  {escape(snippet)}", highlight=False)
    for issue in response.metadata.get("issues", ()):
        console.print(f"  [yellow]issue[/] {escape(str(issue.get('code')))}: {escape(str(issue.get('message')))}")
