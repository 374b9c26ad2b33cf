"""The ``mineru`` parser: installed it does nothing; configured, it reads its file types through the service.

It registers no extensions, so installing the plugin changes no build. The recipe's
``[parsers.documents.options.mineru]`` (``config.py``) turns it on: it then takes the
configured file types, in front of the local parsers of those types. When the service
fails for a document, that document is read by its local parser (heta-core's PDF and
Word parsers, heta-plugin-office's LibreOffice conversion) with a warning that keeps
the failure's code, so a down service costs layout quality, not documents. Without a
local parser, or with ``fallback = false``, the failure is the document's issue.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
from heta_framework.contracts.documents import DocumentParseError, DocumentParser, ParseResult, ParserSet

from heta_plugin_mineru.config import MinerUConfig
from heta_plugin_mineru.errors import LayoutServiceError

log = logging.getLogger(__name__)


def _unconfigured(data: bytes, name: str) -> ParseResult:
    raise DocumentParseError("the mineru parser needs [parsers.documents.options.mineru] endpoint = \"http://...\" in the recipe")


def mineru_parser(config: MinerUConfig, fallbacks: ParserSet) -> DocumentParser:
    """The parser ``config`` describes, falling back on ``fallbacks`` (the local parsers) when the service fails."""

    def parse(data: bytes, name: str) -> ParseResult:
        # imported on the first document: finding plugins (every `heta` command) imports this module, and the
        # client's httpx and the blocks' BeautifulSoup took 0.5 s of it
        from heta_plugin_mineru.blocks import layout_result
        from heta_plugin_mineru.client import request_layout

        try:
            return layout_result(request_layout(config, data, name))
        except LayoutServiceError as failure:
            local = fallbacks.for_name(name) if config.fallback else None
            log.warning("layout service failed for %s (%s)%s", name, failure.code, f"; reading it with {local.name!r}" if local else "")
            if local is None:
                raise
            try:
                result = local.parse(data, name)
            except DocumentParseError as also:
                raise LayoutServiceError(
                    f"{failure}; the local parser {local.name!r} could not read it either: {also}", code=failure.code, outcome=also.outcome,
                    retry=failure.retry,
                ) from None
            warning = (failure.code, f"{failure}; read with the local parser {local.name!r} instead, without the service's layout")
            return attrs.evolve(result, warnings=(*result.warnings, warning))

    return DocumentParser(
        "mineru", config.extensions, parse, f"layout service at {config.endpoint}: titles, tables, figure captions, formulas, pages",
    )


def _configure(config: Any, fallbacks: ParserSet) -> DocumentParser:
    return mineru_parser(config, fallbacks)


MINERU_PARSER = DocumentParser(
    "mineru", (), _unconfigured,
    "a MinerU-style layout service (PDF, .doc, .docx, .ppt) once [parsers.documents.options.mineru] names its endpoint",
    config_type=MinerUConfig, configure=_configure,
)
