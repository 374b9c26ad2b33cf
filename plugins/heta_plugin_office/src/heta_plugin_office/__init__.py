"""heta-plugin-office: PowerPoint decks and legacy Office files as documents.

Registers two parsers: ``pptx`` (python-pptx; a section per slide with its title, text,
tables as rows with their header, picture alt text and speaker notes, each with ``slide N``
provenance) and ``legacy_office`` (``.doc`` and ``.ppt``, converted by LibreOffice when
``soffice`` is on the PATH and read as ``.docx``/``.pptx``; without it, an issue that names
LibreOffice and the layout service heta-plugin-mineru).

Why a plugin of its own and not part of heta-plugin-sheets: a deck is not a spreadsheet,
and someone who indexes slides should not need openpyxl and odfpy, nor the reverse.
"""

from __future__ import annotations

from heta_framework.plugins import hookimpl

from heta_plugin_office.legacy import LEGACY_OFFICE_PARSER, convert, find_converter
from heta_plugin_office.slides import PPTX_PARSER, parse_pptx

__all__ = ["LEGACY_OFFICE_PARSER", "PPTX_PARSER", "convert", "find_converter", "parse_pptx"]


@hookimpl
def register_parsers(register):
    register(PPTX_PARSER)
    register(LEGACY_OFFICE_PARSER)
