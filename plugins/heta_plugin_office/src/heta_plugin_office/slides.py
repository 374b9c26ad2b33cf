"""The ``pptx`` parser: one section per slide, numbered by its place in the deck.

A slide reads as ``# Slide 4: <title>``, then its text frames top to bottom, left to right
(the order a reader's eye takes, not the order shapes were drawn in), its tables as row
lines that name their columns (``[Table 2 row 3] Region: North | Sales: 120``, as Word,
HTML and spreadsheet tables read), the alternative text of its pictures, and last its
speaker notes, which often hold what the presenter actually said.

Each slide is a page span numbered with its slide number and the document says
``page_unit = "slide"``, so a hit reads ``deck.pptx slide 4`` (``contracts/provenance.py``).
Empty slides keep their number: slide 5 is slide 5 even when slide 4 held only a picture.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator
from typing import Any

from heta_framework.builtin.embedded_tables import is_data_table, table_label, table_text
from heta_framework.common.tables import cell_text
from heta_framework.contracts.documents import DocumentParseError, DocumentParser, ParseResult, join_pages


def _reading_order(shapes: Iterable[Any]) -> list[Any]:
    # placeholders without a position inherit it from the layout; they sort where python-pptx reports them
    return sorted(shapes, key=lambda shape: ((shape.top or 0), (shape.left or 0)))


def _table_rows(table: Any) -> list[list[str]]:
    """The grid of a slide table; a merged cell's text once, at its first (origin) cell."""
    return [["" if cell.is_spanned else cell_text(cell.text) for cell in row.cells] for row in table.rows]


def _alt_text(shape: Any) -> str:
    # python-pptx has no property for a picture's description (its alt text); it is the cNvPr "descr" attribute
    properties = shape._element.xpath("./*[1]/p:cNvPr")
    return cell_text(properties[0].get("descr", "")) if properties else ""


class _Slide:
    """What one slide contributes: its blocks of text, and the tables counted so far in the deck."""

    def __init__(self, tables_before: int):
        self.blocks: list[str] = []
        self.tables = tables_before

    def add_shapes(self, shapes: Iterable[Any], skip: Any = None) -> None:
        from pptx.enum.shapes import MSO_SHAPE_TYPE

        for shape in _reading_order(shapes):
            if skip is not None and shape.shape_id == skip:
                continue
            if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
                self.add_shapes(shape.shapes)
            elif getattr(shape, "has_table", False) and shape.has_table:
                self.add_table(shape.table)
            elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
                text = _frame_text(shape.text_frame)
                if text:
                    self.blocks.append(text)
            elif shape.shape_type == MSO_SHAPE_TYPE.PICTURE and (alt := _alt_text(shape)):
                self.blocks.append(f"[Image: {alt}]")

    def add_table(self, table: Any) -> None:
        rows = _table_rows(table)
        if is_data_table(rows):
            self.tables += 1
            self.blocks.append(table_text(rows, table_label("", self.tables)))
        else:  # a one-row or one-column table is layout: its cells are text
            self.blocks.extend(cell for row in rows for cell in row if cell)


def _frame_text(frame: Any) -> str:
    lines = [" ".join(paragraph.text.split()) for paragraph in frame.paragraphs]
    return "\n".join(line for line in lines if line)


def _notes(slide: Any) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return _frame_text(frame) if frame is not None else ""


def _slide_sections(presentation: Any) -> Iterator[tuple[int, str, int]]:
    """(slide number, section text, tables counted so far) for each slide with any text."""
    tables = 0
    for number, slide in enumerate(presentation.slides, start=1):
        title_shape = slide.shapes.title
        title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None and title_shape.has_text_frame else ""
        content = _Slide(tables)
        content.add_shapes(slide.shapes, skip=title_shape.shape_id if title_shape is not None else None)
        tables = content.tables
        notes = _notes(slide)
        if notes:
            content.blocks.append("Speaker notes: " + notes)
        if not title and not content.blocks:
            continue
        heading = f"# Slide {number}: {title}" if title else f"# Slide {number}"
        yield number, "\n\n".join([heading, *content.blocks]), tables


def parse_pptx(data: bytes, name: str) -> ParseResult:
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    try:
        presentation = Presentation(io.BytesIO(data))
        sections = list(_slide_sections(presentation))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, AttributeError, OSError) as exc:
        # python-pptx reads lazily: a broken part may only show while the slides are walked
        raise DocumentParseError(f"python-pptx could not read this presentation: {type(exc).__name__}: {exc}") from exc
    text, pages = join_pages((number, text) for number, text, _ in sections)
    metadata: dict[str, object] = {"page_unit": "slide", "slide_count": len(presentation.slides)}
    if sections and sections[-1][2]:
        metadata["tables"] = sections[-1][2]
    title = cell_text(presentation.core_properties.title or "")
    if title:
        metadata["title"] = title
    return ParseResult(text=text, pages=pages, metadata=metadata)


PPTX_PARSER = DocumentParser(
    "pptx", (".pptx",), parse_pptx,
    "PowerPoint decks via python-pptx: a section per slide (title, text, tables as rows with their header, speaker notes)",
)
