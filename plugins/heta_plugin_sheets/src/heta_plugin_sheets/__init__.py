"""heta-plugin-sheets: spreadsheets as documents.

Registers two parsers: ``xlsx`` (Excel 2007+, through openpyxl in read-only mode, so rows
stream instead of loading the workbook whole) and ``ods`` (OpenDocument, through odfpy).
Each sheet is one section of the document, a "page" numbered from 1 whose name is in
``metadata["sheets"]``, and each row one line that names its columns (see
``heta_framework.common.tables``), so a chunk is understandable alone and says which
sheet and row it came from.
"""

from __future__ import annotations

from heta_framework.plugins import hookimpl

from heta_plugin_sheets.parsers import ODS_PARSER, XLSX_PARSER

__all__ = ["ODS_PARSER", "XLSX_PARSER"]


@hookimpl
def register_parsers(register):
    register(XLSX_PARSER)
    register(ODS_PARSER)
