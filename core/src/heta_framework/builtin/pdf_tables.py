"""Ruled tables in PDF text pages, kept as tables: each row one line naming its columns.

pypdf reads a table as a run of cells ("Station High tide Dover 6.1 ..."). pdfplumber (the
``pdf`` extra) finds tables drawn with ruling lines and gives their grid; a page that has one
(pypdf's content stream says it draws lines) is read again here in reading order: the text above a table, the table's rows as
``common/tables.py`` writes them (``[Table 1 row 2] Station: Dover | High tide (m): 6.1``), the
text below. Pages without a table keep pypdf's text. Tables drawn with no lines at all (columns
aligned by spaces only) are not detected: their text stays as pypdf reads it.
"""

from __future__ import annotations

import io
import logging
import re
from typing import Any

from heta_framework.builtin.embedded_tables import is_data_table, table_label, table_text
from heta_framework.common.tables import cell_text

log = logging.getLogger(__name__)


def _inside(obj: dict[str, Any], bbox: tuple[float, float, float, float]) -> bool:
    middle_x, middle_y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
    return bbox[0] <= middle_x <= bbox[2] and bbox[1] <= middle_y <= bbox[3]


def _text_between(page: Any, top: float, bottom: float, tables: list[tuple[float, float, float, float]]) -> str:
    """The page's text in the band from ``top`` to ``bottom``, leaving out every table's characters."""
    top, bottom = max(top, page.bbox[1]), min(bottom, page.bbox[3])
    if bottom - top < 1:
        return ""
    band = page.crop((page.bbox[0], top, page.bbox[2], bottom))
    outside = band.filter(lambda obj: obj.get("object_type") != "char" or not any(_inside(obj, box) for box in tables))
    return (outside.extract_text() or "").strip()


def _page_text(page: Any, first_number: int) -> tuple[str, int] | None:
    """The page's text with its data tables as row lines, and how many tables; ``None`` if it has none."""
    found = []
    for table in page.find_tables():  # pdfplumber's default: tables drawn with ruling lines
        rows = [[cell_text(cell) for cell in row] for row in table.extract()]
        if is_data_table(rows):
            found.append((table.bbox, rows))
    if not found:
        return None
    found.sort(key=lambda pair: pair[0][1])
    boxes = [bbox for bbox, _ in found]
    pieces, top = [], page.bbox[1]
    for number, (bbox, rows) in enumerate(found, start=first_number):
        pieces.append(_text_between(page, top, bbox[1], boxes))
        pieces.append(table_text(rows, table_label("", number)))
        top = bbox[3]
    pieces.append(_text_between(page, top, page.bbox[3], boxes))
    return "\n".join(piece for piece in pieces if piece), len(found)


#: a rectangle (``re``) or line (``l``) operator after a number: the page draws something a table's rules may be
_DRAWS_LINES = re.compile(rb"\d\s+(?:re|l)\s")


def may_hold_ruled_table(page: Any) -> bool:
    """Whether a pypdf page draws lines or rectangles (or has form objects that might): a cheap test on the raw
    content stream, so pdfplumber's layout analysis (~45 ms a page) runs only on pages that can hold a table."""
    try:
        contents = page.get_contents()
        if contents is not None and _DRAWS_LINES.search(contents.get_data()):
            return True
        xobjects = (page.get("/Resources") or {}).get("/XObject") or {}
        return any(xobject.get_object().get("/Subtype") == "/Form" for xobject in xobjects.values())
    except Exception:  # an odd content stream: let pdfplumber look
        return True


def pdf_table_pages(data: bytes, candidates: list[int], warnings: list[tuple[str, str]]) -> tuple[dict[int, str], int]:
    """Page number -> that page's text with its tables as row lines (only ``candidates`` pages that have a
    table), and the number of tables. Without pdfplumber: nothing (pypdf's text stays). A PDF pdfplumber
    cannot read adds a ``pdf_tables_unreadable`` warning and keeps pypdf's text."""
    if not candidates:
        return {}, 0
    try:
        import pdfplumber
    except ImportError:
        return {}, 0
    pages: dict[int, str] = {}
    tables = 0
    try:
        with pdfplumber.open(io.BytesIO(data), pages=candidates) as document:
            for page in document.pages:
                number = page.page_number
                read = _page_text(page, tables + 1)
                if read is not None:
                    pages[number], found = read
                    tables += found
    except Exception as exc:  # pdfminer's errors have no common base; the text layer from pypdf is still good
        log.info("pdfplumber could not look for tables: %s", exc)
        warnings.append(("pdf_tables_unreadable", f"tables could not be read as tables ({type(exc).__name__}: {exc}); the text is kept as pypdf reads it"))
        return {}, 0
    return pages, tables
