"""Tables as text a chunk can stand on: every row carries its header and where it came from.

A spreadsheet, a CSV file or a table inside HTML/Word loses its meaning when its cells
are flattened into one run of words: "30 Paris" says nothing once the header row is in
another chunk. So each row becomes one line that names its columns::

    [Staff row 3] Name: Alice | Age: 30 | City: Paris

The bracketed label is the provenance a result shows (sheet and row). Empty cells are
left out; a table without a header row names its columns A, B, C, ...
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

_MAX_CELL = 2_000  # a runaway cell (a pasted document) is cut, so one cell cannot swamp a chunk


def column_name(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA (spreadsheet column letters)."""
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(ord("A") + remainder) + letters
    return letters


def cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = " ".join(str(value).split())
    return text[:_MAX_CELL]


def _header(first: Sequence[str]) -> list[str]:
    names, seen = [], set()
    for index, name in enumerate(first):
        name = name or column_name(index)
        if name in seen:  # two "Total" columns stay apart
            name = f"{name} ({column_name(index)})"
        seen.add(name)
        names.append(name)
    return names


def table_lines(rows: Iterable[Sequence[object]], label: str, *, has_header: bool = True, first_row_number: int = 1) -> Iterator[str]:
    """One line per non-empty row, ``[label row N] Header: value | ...``; rows are read lazily (large sheets)."""
    header: list[str] | None = None
    for number, raw in enumerate(rows, start=first_row_number):
        cells = [cell_text(value) for value in raw]
        if not any(cells):
            continue
        if header is None and has_header:
            header = _header(cells)
            continue
        if header is None:
            header = []
        while len(header) < len(cells):
            header.append(column_name(len(header)))
        pairs = [f"{header[i]}: {cell}" for i, cell in enumerate(cells) if cell]
        yield f"[{label} row {number}] " + " | ".join(pairs)
