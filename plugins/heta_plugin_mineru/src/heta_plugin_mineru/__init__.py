"""heta-plugin-mineru: documents read by a MinerU-style layout service over HTTP.

Registers the ``mineru`` parser. It takes no file types until the recipe configures it::

    [parsers.documents.options.mineru]
    endpoint = "http://127.0.0.1:8000"      # POST {endpoint}/file_parse
    api_key_env = "MINERU_API_KEY"          # optional: the variable holding the key, never the key

Then PDF, .doc, .docx and .ppt files (``extensions``) go to the service, and its blocks
(titles, tables, figures with captions, formulas) become sections with page numbers
(``blocks.py``). Time-outs, 5xx answers and malformed answers are document issues with
stable codes (``client.py``); the document falls back to its local parser when there is
one (``parser.py``), and the build goes on.
"""

from __future__ import annotations

from heta_framework.common.lazy import lazy_attributes
from heta_framework.plugins import hookimpl

from heta_plugin_mineru.answers import LayoutAnswer
from heta_plugin_mineru.config import MinerUConfig
from heta_plugin_mineru.errors import LayoutServiceError
from heta_plugin_mineru.parser import MINERU_PARSER, mineru_parser

#: imported when first named, not when plugins are found: they bring httpx and BeautifulSoup (parser.py)
__getattr__ = lazy_attributes(__name__, {"layout_result": "heta_plugin_mineru.blocks", "request_layout": "heta_plugin_mineru.client"})


__all__ = ["MINERU_PARSER", "LayoutAnswer", "LayoutServiceError", "MinerUConfig", "layout_result", "mineru_parser", "request_layout"]


@hookimpl
def register_parsers(register):
    register(MINERU_PARSER)
