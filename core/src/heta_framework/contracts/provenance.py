"""Where a chunk came from, as fields a filter can use and as one line a person can read.

A chunk already knows its document, source and page. A chunk of a table (a CSV file, a
sheet, a table inside HTML/Word/PDF) also holds row lines that start with their label,
``[Planets row 4] Planet: Earth | ...`` (``heta_framework.common.tables``). From those,
``table_provenance`` gives the chunk ``sheet`` (or ``table``), ``row_start`` and ``row_end``
(and a chunk across a page break gets ``page_end``);
``describe_location`` turns a result's metadata into ``planets.xlsx sheet Planets rows 2-9``,
``report.pdf p.3 Table 1 rows 2-4``, ``deck.pptx slide 4`` or ``book.epub section 3`` (a parser whose
pages are slides or sections says ``page_unit = "slide"`` or ``"section"`` in its document metadata), which ``heta query`` and ``QueryResponse.to_dict()`` show.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

#: a row line as common/tables.py writes it, at the start of a line
_ROW_LINE = re.compile(r"^\[(?P<label>[^\]\n]+) row (?P<row>\d+)\] ", re.MULTILINE)


def table_provenance(text: str, document_metadata: Mapping[str, Any]) -> dict[str, Any]:
    """``sheet``/``table``, ``row_start``, ``row_end`` of the table rows in ``text``; ``{}`` for prose.

    A chunk that crosses from one table into the next is labelled with the table it starts in
    (its first row line), and the rows are that table's.
    """
    rows: list[int] = []
    label = None
    for match in _ROW_LINE.finditer(text):
        if label is None:
            label = match["label"]
        if match["label"] == label:
            rows.append(int(match["row"]))
    if label is None:
        return {}
    where = "sheet" if label in (document_metadata.get("sheets") or ()) else "table"
    return {where: label, "row_start": min(rows), "row_end": max(rows)}


def describe_location(metadata: Mapping[str, Any]) -> str:
    """``name p.3``, ``name sheet Q1 rows 2-40``, ``name Table 2 row 5``; the file name alone without more."""
    name = str(PurePath(str(metadata.get("source") or "")).name or metadata.get("name") or metadata.get("document_id") or "")
    parts = [name] if name else []
    sheet, table, page = metadata.get("sheet"), metadata.get("table"), metadata.get("page")
    if sheet:
        parts.append(f"sheet {sheet}")  # a sheet's "page" is only its position in the workbook
    elif page is not None and (unit := metadata.get("page_unit")):  # a deck's "pages" are its slides, a book's its sections
        last = metadata.get("page_end")
        parts.append(f"{unit} {page}" if last in (None, page) else f"{unit}s {page}-{last}")
    elif page is not None and not metadata.get("media_type"):  # an image file (its parser names its type) is one page
        last = metadata.get("page_end")
        parts.append(f"p.{page}" if last in (None, page) else f"pp.{page}-{last}")
    if table and table != PurePath(name).stem:  # a CSV file's one table is labelled with the file's own name
        parts.append(str(table))
    start, end = metadata.get("row_start"), metadata.get("row_end")
    if start is not None:
        parts.append(f"row {start}" if end in (None, start) else f"rows {start}-{end}")
    return " ".join(parts)
