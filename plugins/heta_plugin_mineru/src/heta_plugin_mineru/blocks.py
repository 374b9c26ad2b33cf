"""The layout service's blocks -> our text, one page span per page.

MinerU's ``content_list`` is a flat list of blocks in reading order, each with its
``page_idx`` (from 0): ``text`` (a ``text_level`` makes it a title), ``list``, ``table``
(``table_body`` HTML, ``table_caption``, ``table_footnote``), ``image`` (``image_caption``,
``image_footnote``), ``equation`` (LaTeX in ``text``), ``code``; page furniture (``header``,
``footer``, ``page_number``) is left out, as it repeats on every page and answers nothing.

They become what our other parsers write, so a chunk reads the same whoever parsed it:

- a title: a Markdown heading (``## Results``);
- a table: one line per row naming its columns, labelled with its caption when that gives
  the document's own number (``Table 2: Pumping stations``), else ``Table N`` (or
  ``Table N: caption``) numbered through the document, so a hit reads
  ``report.pdf p.12 Table 2: Pumping stations rows 3-5``;
- a figure with a caption: ``[Figure N] caption`` (a figure without one has no text to find);
- a formula: its LaTeX, as the service wrote it.

An answer with Markdown but no block list (some services, older versions) is read from the
Markdown: its HTML tables become row lines too, but there are no page numbers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from bs4 import BeautifulSoup
from heta_framework.builtin.embedded_tables import html_table_rows, is_data_table, table_label, table_text
from heta_framework.common.tables import cell_text
from heta_framework.contracts.documents import PageSpan, ParseResult, join_pages

from heta_plugin_mineru.answers import LayoutAnswer
from heta_plugin_mineru.errors import BAD_ANSWER, LayoutServiceError

#: page furniture: repeated on every page, it would only add noise to every chunk
FURNITURE = frozenset({"header", "footer", "page_number", "page_header", "page_footer"})
FORMULAS = frozenset({"equation", "interline_equation"})
_HTML_TABLE = re.compile(r"<table\b.*?</table>", re.IGNORECASE | re.DOTALL)
_MAX_HEADING = 6
#: a caption that numbers its table itself ("Table 3.1: ...", "Tab. 2 ..."): its number is the one readers know
_OWN_NUMBER = re.compile(r"^(table|tab\.)\s*[0-9]", re.IGNORECASE)
_MAX_LABEL = 60


def _joined(value: Any) -> str:
    """A caption or footnote: MinerU gives a list of strings (sometimes one string)."""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list):
        return " ".join(" ".join(part.split()) for part in value if isinstance(part, str) and part.strip())
    return ""


class _Counts:
    def __init__(self) -> None:
        self.tables = self.figures = self.formulas = 0


def _label(caption: str, number: int) -> str:
    # brackets would end the row line's label early (``[label row N]``, common/tables.py)
    caption = cell_text(caption).replace("[", "(").replace("]", ")")
    return caption[:_MAX_LABEL].rstrip(" .:") if _OWN_NUMBER.match(caption) else table_label(caption, number)


def _table_block(html: str, caption: str, counts: _Counts) -> list[str]:
    tables = BeautifulSoup(html, "html.parser").find_all("table")
    rows = html_table_rows(tables[0]) if tables else []
    if is_data_table(rows):
        counts.tables += 1
        return [table_text(rows, _label(caption, counts.tables))]
    # one row or one column is layout, not data; its cells are plain text
    return [part for part in (caption, *(cell for row in rows for cell in row if cell)) if part]


def _item_text(item: dict[str, Any], counts: _Counts) -> list[str]:
    kind = str(item.get("type") or "")
    raw = item.get("text")
    text = raw if isinstance(raw, str) else ""
    if kind == "table":
        blocks = _table_block(str(item.get("table_body") or ""), _joined(item.get("table_caption")), counts)
        footnote = _joined(item.get("table_footnote"))
        return blocks + ([footnote] if footnote else [])
    if kind == "image":
        caption = _joined(item.get("image_caption"))
        if not caption:
            return []
        counts.figures += 1
        footnote = _joined(item.get("image_footnote"))
        return [f"[Figure {counts.figures}] {caption}" + (f" {footnote}" if footnote else "")]
    if kind in FORMULAS:
        counts.formulas += 1
        return [text.strip()] if text.strip() else []
    if kind == "list":
        entries = item.get("list_items")
        lines = [" ".join(entry.split()) for entry in entries if isinstance(entry, str) and entry.strip()] if isinstance(entries, list) else []
        return ["\n".join(lines)] if lines else []
    if kind == "code":
        code = item.get("code_body")
        body = code if isinstance(code, str) else text
        return [body.strip()] if body.strip() else []
    text = text.strip()
    if not text:
        return []
    level = item.get("text_level")
    if kind == "title" or (isinstance(level, int) and level > 0):
        return ["#" * min(max(level if isinstance(level, int) else 1, 1), _MAX_HEADING) + " " + " ".join(text.split())]
    return [text]


def _page(item: dict[str, Any], last: int) -> int:
    index = item.get("page_idx")
    # a block without a page (a few services leave it out) belongs with the block before it
    return index + 1 if isinstance(index, int) and not isinstance(index, bool) and index >= 0 else last


def _pages_text(pages: Iterable[tuple[int, list[str]]]) -> tuple[str, tuple[PageSpan, ...]]:
    """Each page's blocks joined, pages without text left out."""
    return join_pages((number, text) for number, blocks in pages if (text := "\n\n".join(blocks)))


def from_content_list(items: list[Any], counts: _Counts) -> tuple[str, tuple[PageSpan, ...], int]:
    """(text, page spans, page count) of a block list."""
    if not all(isinstance(item, dict) for item in items):
        raise LayoutServiceError("the layout service's content_list holds entries that are not objects", code=BAD_ANSWER)
    pages: dict[int, list[str]] = {}
    last = 1
    for item in items:
        last = _page(item, last)
        if str(item.get("type") or "") in FURNITURE:
            continue
        pages.setdefault(last, []).extend(_item_text(item, counts))
    text, spans = _pages_text(sorted(pages.items()))
    return text, spans, max(pages, default=0)


def from_markdown(markdown: str, counts: _Counts) -> str:
    """The Markdown with each HTML table replaced by its row lines."""

    def table(match: re.Match[str]) -> str:
        return "\n".join(_table_block(match.group(0), "", counts))

    return _HTML_TABLE.sub(table, markdown).strip()


def layout_result(answer: LayoutAnswer) -> ParseResult:
    """A ``ParseResult`` from the service's answer: its blocks with pages, else its Markdown."""
    counts = _Counts()
    metadata: dict[str, object] = {"layout_service": "mineru"}
    if answer.backend:
        metadata["layout_backend"] = answer.backend
    if answer.content_list:
        text, pages, page_count = from_content_list(answer.content_list, counts)
        metadata["page_count"] = page_count
    elif answer.markdown.strip():
        text, pages = from_markdown(answer.markdown, counts), ()
    else:
        raise LayoutServiceError("the layout service's answer holds neither blocks (content_list) nor Markdown", code=BAD_ANSWER)
    for name, count in (("tables", counts.tables), ("figures", counts.figures), ("formulas", counts.formulas)):
        if count:
            metadata[name] = count
    return ParseResult(text=text, pages=pages, metadata=metadata)
