"""CSV and TSV files as tables: each row a line that carries its header (``common/tables.py``).

Rows are read lazily with the standard library's ``csv`` reader. The delimiter is the
extension's (tab for ``.tsv``/``.tab``), or what ``csv.Sniffer`` finds in the first lines
of a ``.csv`` (comma, semicolon, tab, pipe), defaulting to a comma.
"""

from __future__ import annotations

import csv
import io
from pathlib import PurePath

from heta_framework.common.tables import table_lines
from heta_framework.contracts.documents import DocumentParser, ParseResult

_SNIFF_BYTES = 64 * 1024
_CANDIDATES = ",;\t|"


def _dialect(text: str, suffix: str) -> type[csv.Dialect] | csv.Dialect:
    if suffix in (".tsv", ".tab"):
        return csv.excel_tab
    try:
        return csv.Sniffer().sniff(text[:_SNIFF_BYTES], delimiters=_CANDIDATES)
    except csv.Error:  # one column, or nothing regular enough to tell
        return csv.excel


def parse_delimited(data: bytes, name: str) -> ParseResult:
    from heta_framework.builtin.parsers import decode_text_checked  # the core's one way to read text bytes

    text, warnings = decode_text_checked(data)
    label = PurePath(name).stem
    reader = csv.reader(io.StringIO(text, newline=""), _dialect(text, PurePath(name).suffix.lower()))
    lines = list(table_lines(reader, label))
    return ParseResult(text="\n".join(lines), metadata={"table_rows": len(lines)}, warnings=warnings)


DELIMITED_PARSER = DocumentParser(
    "delimited", (".csv", ".tsv", ".tab"), parse_delimited, "CSV/TSV tables, each row with its header"
)
