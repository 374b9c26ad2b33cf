"""Readable and JSON renderings of a ``QueryResponse``."""

from __future__ import annotations

from typing import Any

from rich.console import Console

from heta_framework.kb.search import QueryResponse, QueryResult


def result_to_dict(result: QueryResult) -> dict[str, Any]:
    return {
        "id": result.id,
        "kind": result.kind,
        "score": result.score,
        "text": result.text,
        "metadata": dict(result.metadata),
        "sources": list(result.sources),
        "evidence": [result_to_dict(e) for e in result.evidence],
    }


def response_to_dict(response: QueryResponse) -> dict[str, Any]:
    return {
        "results": [result_to_dict(r) for r in response.results],
        "answer": response.answer,
        "citations": [{"marker": c.marker, "result_id": c.result_id} for c in response.citations],
        "metadata": dict(response.metadata),
        "trace": response.trace.to_dict() if response.trace else None,
    }


def render_response(console: Console, mode: str, response: QueryResponse, width: int = 160) -> None:
    if response.answer:
        console.print(f"[bold]Answer:[/] {response.answer}")
    if not response.results:
        console.print("  (no results)")
    for rank, result in enumerate(response.results, start=1):
        where = result.metadata.get("source", "")
        if where:
            where = where.rsplit("/", 1)[-1]
        snippet = " ".join(result.text.split())[:width]
        console.print(f"  {rank}. [cyan]{result.kind}[/] {result.score:.4f} [dim]{where}[/]  {snippet}", highlight=False)
    for issue in response.metadata.get("issues", ()):
        console.print(f"  [yellow]issue[/] {issue.get('code')}: {issue.get('message')}")
