"""The ``legacy_office`` parser: ``.doc`` and ``.ppt`` files, converted by LibreOffice, then read as
``.docx`` (heta-core's Word parser) or ``.pptx`` (``slides.py``).

The binary Office formats have no well-kept pure-Python reader; LibreOffice converts them
faithfully. So when ``soffice`` (or ``libreoffice``) is on the PATH, each file is converted
in a temporary folder of its own, with a throw-away LibreOffice profile (two conversions
at once, or a LibreOffice window the user has open, would otherwise fight over one
profile's lock), under a time-out that kills the whole process group (soffice starts a
child ``soffice.bin`` that a plain kill leaves running).

Without LibreOffice the document is a ``needs_document_converter`` issue that names both
ways out: install LibreOffice, or configure a layout service (heta-plugin-mineru), which
reads these files itself. A conversion that fails or times out is
``document_conversion_failed``. Either way the build goes on.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path, PurePath
from typing import Any

import attrs
from heta_framework.common.validators import number
from heta_framework.contracts.documents import DocumentParseError, DocumentParser, ParseResult, ParserSet

from heta_plugin_office.slides import parse_pptx

#: the modern format each legacy one converts to, and LibreOffice's filter for it
TARGETS = {".doc": ("docx", "docx:MS Word 2007 XML"), ".ppt": ("pptx", "pptx:Impress MS PowerPoint 2007 XML")}
DEFAULT_TIMEOUT_SECONDS = 120.0
CONVERTER_NAMES = ("soffice", "libreoffice")

NEEDS_CONVERTER_OUTCOME = (
    "Not indexed. Install LibreOffice so that `soffice` is on the PATH, or configure a layout service "
    "(pip install heta-plugin-mineru; [parsers.documents.options.mineru] endpoint = \"http://...\"), "
    "then build again with --rebuild."
)


@attrs.frozen
class LegacyOfficeConfig:
    """``[parsers.documents.options.legacy_office]``: how long one conversion may take."""

    timeout_seconds: float = attrs.field(default=DEFAULT_TIMEOUT_SECONDS, validator=number(above=0))


def find_converter() -> str | None:
    """The LibreOffice command on the PATH, if any."""
    return next((found for command in CONVERTER_NAMES if (found := shutil.which(command))), None)


def _run(command: list[str], timeout: float) -> tuple[int, str]:
    """Run ``command`` in a process group of its own; on time-out kill the group. (return code, stderr tail)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise
    return process.returncode, stderr.decode("utf-8", "replace").strip()[-500:]


def convert(data: bytes, name: str, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> bytes:
    """The bytes of ``name`` (a .doc or .ppt) converted by LibreOffice to .docx/.pptx."""
    suffix = PurePath(name).suffix.lower()
    target, export_filter = TARGETS[suffix]
    converter = find_converter()
    if converter is None:
        raise DocumentParseError(
            f"a legacy Office file ({suffix}) needs a converter: LibreOffice is not installed (no soffice on the PATH) "
            "and no layout service is configured",
            code="needs_document_converter", outcome=NEEDS_CONVERTER_OUTCOME,
        )
    with tempfile.TemporaryDirectory(prefix="heta-convert-") as folder:
        work = Path(folder)
        # a fixed file name: the user's may hold characters a command line or LibreOffice mishandles
        source = work / f"document{suffix}"
        source.write_bytes(data)
        out = work / "out"
        command = [
            converter, "--headless", "--norestore", "--nolockcheck",
            f"-env:UserInstallation={(work / 'profile').as_uri()}",
            "--convert-to", export_filter, "--outdir", str(out), str(source),
        ]
        try:
            code, stderr = _run(command, timeout)
        except subprocess.TimeoutExpired:
            raise DocumentParseError(
                f"LibreOffice did not convert it within {timeout:g} s", code="document_conversion_failed",
                outcome="Not indexed. Raise [parsers.documents.options.legacy_office] timeout_seconds, or save the file as "
                f".{target}, then build again with --rebuild.",
            ) from None
        converted = out / f"document.{target}"
        if not converted.is_file():
            raise DocumentParseError(
                f"LibreOffice could not convert it to .{target} (exit code {code}{': ' + stderr if stderr else ''})",
                code="document_conversion_failed", outcome=f"Not indexed. Open it in an Office program and save it as .{target}.",
            )
        return converted.read_bytes()


def _read_converted(data: bytes, name: str) -> ParseResult:
    """Parse the converted bytes with the modern format's parser; the metadata says it was converted."""
    from heta_framework.builtin.parsers import parse_docx

    suffix = PurePath(name).suffix.lower()
    target = TARGETS[suffix][0]
    parse = parse_docx if target == "docx" else parse_pptx
    result = parse(data, f"{PurePath(name).stem}.{target}")
    return attrs.evolve(result, metadata={**result.metadata, "converted_from": suffix.lstrip("."), "converter": "libreoffice"})


def legacy_parser(timeout: float = DEFAULT_TIMEOUT_SECONDS) -> DocumentParser:
    def parse(data: bytes, name: str) -> ParseResult:
        return _read_converted(convert(data, name, timeout), name)

    return DocumentParser(
        "legacy_office", tuple(TARGETS), parse,
        "legacy Word (.doc) and PowerPoint (.ppt) files, converted by LibreOffice (soffice on the PATH) and read as .docx/.pptx",
        config_type=LegacyOfficeConfig, configure=_configure,
    )


def _configure(config: Any, fallbacks: ParserSet) -> DocumentParser:
    return legacy_parser(config.timeout_seconds)


LEGACY_OFFICE_PARSER = legacy_parser()
