"""The ``xlsx`` and ``ods`` parsers: one section per sheet, one line per row with its header."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator, Sequence

from heta_framework.common.tables import table_lines
from heta_framework.kb.documents import DocumentParseError, DocumentParser, ParseResult, join_pages

#: an ODS row or cell "repeated" this many times is the sheet's empty tail, not data
_MAX_REPEAT = 1_000


def sheets_result(sheets: Iterable[tuple[str, Iterable[Sequence[object]]]]) -> ParseResult:
    """Join sheets into one text: each a ``# Sheet: name`` section, a page span numbered from 1."""
    names: list[str] = []
    numbered: list[tuple[int, str]] = []
    for number, (name, rows) in enumerate(sheets, start=1):
        lines = list(table_lines(rows, name))
        if not lines:
            continue
        numbered.append((number, f"# Sheet: {name}\n" + "\n".join(lines)))
        names.append(name)
    text, pages = join_pages(numbered)
    return ParseResult(text=text, pages=pages, metadata={"sheets": names})


def parse_xlsx(data: bytes, name: str) -> ParseResult:
    import openpyxl

    try:
        # read_only streams rows from the zip; data_only reads cached formula results, not formulas
        workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise DocumentParseError(f"openpyxl could not read this workbook: {exc}") from exc
    try:
        return sheets_result((sheet.title, sheet.iter_rows(values_only=True)) for sheet in workbook.worksheets)
    finally:
        workbook.close()


def _ods_cell_text(cell) -> str:
    from odf import teletype

    value = cell.getAttribute("value")  # numbers and dates keep their value; text cells have none
    return value if value not in (None, "") else teletype.extractText(cell)


def _ods_rows(table) -> Iterator[list[str]]:
    from odf.table import TableCell, TableRow

    for row in table.getElementsByType(TableRow):
        repeat = int(row.getAttribute("numberrowsrepeated") or 1)
        cells: list[str] = []
        for cell in row.getElementsByType(TableCell):
            times = int(cell.getAttribute("numbercolumnsrepeated") or 1)
            cells.extend([_ods_cell_text(cell)] * min(times, _MAX_REPEAT))
        while cells and not cells[-1]:
            cells.pop()
        for _ in range(min(repeat, _MAX_REPEAT) if cells else 1):
            yield cells


def parse_ods(data: bytes, name: str) -> ParseResult:
    from odf.opendocument import load
    from odf.table import Table

    try:
        document = load(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise DocumentParseError(f"odfpy could not read this spreadsheet: {exc}") from exc
    tables = document.spreadsheet.getElementsByType(Table) if document.spreadsheet else []
    return sheets_result((table.getAttribute("name"), _ods_rows(table)) for table in tables)


XLSX_PARSER = DocumentParser("xlsx", (".xlsx", ".xlsm"), parse_xlsx, "Excel workbooks via openpyxl: a section per sheet, rows with headers")
ODS_PARSER = DocumentParser("ods", (".ods",), parse_ods, "OpenDocument spreadsheets via odfpy: a section per sheet, rows with headers")
