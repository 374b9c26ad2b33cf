"""Tables inside HTML pages and Word files, read as rows for ``common/tables.py``.

A table flattened into a run of cells ("Name Age Alice 30 Bob 41") loses which value
belongs to which column. These helpers read a table's grid (merged cells, ``colspan``
and ``rowspan`` included) so that each row becomes one line naming its columns, the
same rendering CSV files and spreadsheets get; every chunk of a long table then still
says what its values are, whichever rows it holds.

A "table" of one row or one column is page layout, not data: it is left to the
document's ordinary text.
"""

from __future__ import annotations

from typing import Any

from heta_framework.common.tables import cell_text, table_lines

#: a colspan/rowspan beyond this is a broken page, not a wider table
_MAX_SPAN = 50
_MAX_LABEL = 60


def is_data_table(rows: list[list[str]]) -> bool:
    filled = [row for row in rows if any(row)]
    return len(filled) >= 2 and max(len(row) for row in filled) >= 2


def table_label(caption: str, number: int) -> str:
    """``Table 2``, or ``Table 2: <caption>`` so a result says which table a row came from."""
    caption = cell_text(caption)[:_MAX_LABEL]
    return f"Table {number}: {caption}" if caption else f"Table {number}"


def table_text(rows: list[list[str]], label: str) -> str:
    return "\n".join(table_lines(rows, label))


def _span(cell: Any, attribute: str) -> int:
    try:
        return max(1, min(int(str(cell.get(attribute, 1)).strip() or 1), _MAX_SPAN))
    except ValueError:
        return 1


def _fill_carried(cells: list[str], carried: dict[int, tuple[str, int]]) -> None:
    """Put the text of rowspan cells from rows above into the columns they still cover."""
    while len(cells) in carried:
        text, left = carried.pop(len(cells))
        if left > 1:
            carried[len(cells)] = (text, left - 1)
        cells.append(text)


def html_table_rows(table: Any) -> list[list[str]]:
    """The grid of a BeautifulSoup ``<table>`` (not of tables nested in it).

    A ``colspan`` cell's text stands at its first column; a ``rowspan`` cell's text is repeated in
    each row it covers, so every row line stays understandable alone.
    """
    rows: list[list[str]] = []
    carried: dict[int, tuple[str, int]] = {}  # column -> (text, rows still covered) from a rowspan above
    for tr in table.find_all("tr"):
        if tr.find_parent("table") is not table:
            continue
        cells: list[str] = []
        for cell in tr.find_all(["td", "th"], recursive=False):
            _fill_carried(cells, carried)
            text = cell_text(cell.get_text(" "))
            down = _span(cell, "rowspan")
            for column in range(_span(cell, "colspan")):
                value = text if column == 0 else ""  # like a merged Word cell: its text once, at its first column
                if down > 1:
                    carried[len(cells)] = (value, down - 1)
                cells.append(value)
        _fill_carried(cells, carried)
        rows.append(cells)
    return rows


def replace_html_tables(soup: Any) -> int:
    """Replace each data ``<table>`` of ``soup`` with its row lines, in place; returns how many were replaced."""
    tables = soup.find_all("table")
    numbers = {id(table): number for number, table in enumerate(tables, start=1)}
    replaced = 0
    for table in reversed(tables):  # innermost first: an outer table then reads its inner one's lines
        rows = html_table_rows(table)
        if not is_data_table(rows):
            continue
        caption = table.find("caption")
        label = table_label(caption.get_text(" ") if caption is not None else "", numbers[id(table)])
        table.replace_with(soup.new_string("\n" + table_text(rows, label) + "\n"))
        replaced += 1
    return replaced


def docx_table_rows(table: Any) -> list[list[str]]:
    """The grid of a python-docx table: a horizontally merged cell's text once, at its first column;
    a vertically merged one's in each row (python-docx gives the top cell there)."""
    rows: list[list[str]] = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            # python-docx returns a horizontally merged cell once per grid column it covers
            cells.append("" if cell._tc is previous else cell_text(cell.text))
            previous = cell._tc
        rows.append(cells)
    return rows
