"""The layout service's answer for one file: MinerU's JSON, or the zip of its output folder.

JSON: ``{"backend", "version", "results": {<file stem>: {"md_content", "content_list"}}}``, where
``content_list`` is a list, or (older MinerU versions) the JSON file's text as a string. A zip:
``<stem>_content_list.json`` (not ``_content_list_v2.json``, a different shape) and ``full.md``
or ``<stem>.md``; images are not read. Anything else is ``layout_service_bad_answer``.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping
from typing import Any

import attrs

from heta_plugin_mineru.errors import BAD_ANSWER, LayoutServiceError

#: a Markdown or block list bigger than this, uncompressed, is not one document's layout
_MAX_ZIP_MEMBER = 200 * 1024 * 1024


@attrs.frozen
class LayoutAnswer:
    markdown: str
    content_list: list[Any] | None
    backend: str = ""
    version: str = ""


def answer_from_json(body: Any) -> LayoutAnswer:
    """The Markdown and block list of the one file in MinerU's JSON answer."""
    results = body.get("results") if isinstance(body, dict) else None
    if not isinstance(results, Mapping) or len(results) != 1:
        found = sorted(body) if isinstance(body, dict) else type(body).__name__
        raise LayoutServiceError(f"the layout service's answer has no 'results' for one file (found {found})", code=BAD_ANSWER)
    [result] = results.values()
    if not isinstance(result, Mapping):
        raise LayoutServiceError("the layout service's result for the file is not an object", code=BAD_ANSWER)
    markdown = result.get("md_content") or ""
    content_list = result.get("content_list")
    if isinstance(content_list, str):  # older MinerU versions send the file's JSON text as it is
        try:
            content_list = json.loads(content_list)
        except ValueError:
            raise LayoutServiceError("the layout service's content_list is not valid JSON", code=BAD_ANSWER) from None
    if not isinstance(markdown, str) or (content_list is not None and not isinstance(content_list, list)):
        raise LayoutServiceError("the layout service's md_content is not text or its content_list is not a list", code=BAD_ANSWER)
    return LayoutAnswer(markdown, content_list, str(body.get("backend") or ""), str(body.get("version") or ""))


def answer_from_zip(content: bytes) -> LayoutAnswer:
    """MinerU's output folder as a zip: ``<stem>_content_list.json`` (not the ``_v2`` one, a different shape) and
    ``full.md`` or ``<stem>.md``; images are not read."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
        names = archive.namelist()
        blocks = next((n for n in names if n.endswith("_content_list.json")), None)
        markdown = next((n for n in names if n.endswith("full.md")), None) or next((n for n in names if n.endswith(".md")), None)
        for member in (blocks, markdown):
            if member is not None and archive.getinfo(member).file_size > _MAX_ZIP_MEMBER:
                raise LayoutServiceError(f"the layout service's {member} is over {_MAX_ZIP_MEMBER // 1048576} MB", code=BAD_ANSWER)
        content_list = json.loads(archive.read(blocks)) if blocks is not None else None
        text = archive.read(markdown).decode("utf-8", "replace") if markdown is not None else ""
    except (zipfile.BadZipFile, ValueError, KeyError, OSError) as exc:
        raise LayoutServiceError(f"the layout service answered with a zip that cannot be read ({type(exc).__name__})", code=BAD_ANSWER) from None
    if content_list is None and not text:
        raise LayoutServiceError("the layout service's zip holds neither a content list nor Markdown", code=BAD_ANSWER)
    if content_list is not None and not isinstance(content_list, list):
        raise LayoutServiceError("the layout service's content list is not a list", code=BAD_ANSWER)
    return LayoutAnswer(text, content_list)
