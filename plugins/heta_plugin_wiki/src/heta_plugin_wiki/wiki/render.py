"""A page, and the index page, as markdown for one caller: links and index entries name only pages whose documents
the caller may read (a related page's title says what its document is about)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from heta_plugin_wiki.wiki.persist import Page, page_id

Readable = Callable[[str], bool]


def page_markdown(page: Page, index: Mapping[str, Mapping[str, Any]], readable: Readable) -> str:
    lines = [f"# {page.title}", "", f"> {page.summary}" if page.summary else "", ""]
    for section in page.sections:
        lines += [f"## {section.heading}", "", section.text, ""]
    if page.entities:
        lines += ["## Key entities", "", *(f"- {name}" for name in page.entities), ""]
    related = [d for d in index.get(page.document_id, {}).get("related", []) if d in index and readable(d)]
    if related:
        lines += ["## Related pages", "", *(f"- [{index[d]['title']}]({page_id(d)})" for d in related), ""]
    lines += [f"*Source: document `{page.document_id}` ({page.origin} page)*", ""]
    return "\n".join(line for i, line in enumerate(lines) if line or (i and lines[i - 1])).strip() + "\n"


def index_markdown(index: Mapping[str, Mapping[str, Any]], readable: Readable) -> str:
    shown = sorted((entry["title"], document_id) for document_id, entry in index.items() if readable(document_id))
    lines = ["# Wiki index", "", f"{len(shown)} page(s).", ""]
    lines += [f"- [{title}]({page_id(document_id)}): {_short(index[document_id]['summary'])}" for title, document_id in shown]
    return "\n".join(lines) + "\n"


def _short(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
