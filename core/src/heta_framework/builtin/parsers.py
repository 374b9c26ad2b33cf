"""Document parsers for text, Markdown, HTML, PDF and Word files, built on well-kept libraries."""

from __future__ import annotations

import io

from heta_framework.builtin.embedded_tables import docx_table_rows, is_data_table, replace_html_tables, table_label, table_text
from heta_framework.builtin.pdf_tables import may_hold_ruled_table, pdf_table_pages
from heta_framework.contracts.documents import DocumentParseError, DocumentParser, PageImage, ParseResult, join_pages


class BinaryDocumentError(DocumentParseError):
    """The bytes are not text in any encoding we can detect."""


class ParserDependencyError(DocumentParseError):
    """The parser's library is an optional extra of heta-core that is not installed."""


def _require(module: str, extra: str, what: str):
    """Import a parser library, or say which extra brings it (core stays light without them)."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ParserDependencyError(
            f"{what} needs the {module} package, which is not installed: pip install 'heta-core[{extra}]' "
            "(or 'heta-core[documents]' for every format), then run the build again with --rebuild"
        ) from None


#: at most this share of non-ASCII bytes, a file that is not valid UTF-8 is read as UTF-8 with
#: replacement characters: too few bytes for an encoding guess to be more than noise
_FEW_NON_ASCII = 0.01


def decode_text_checked(data: bytes) -> tuple[str, tuple[tuple[str, str], ...]]:
    """Bytes -> (text, warnings). Never silent garbage:

    - valid UTF-8 (with or without BOM) or UTF-16 with a BOM: read as is, no warning;
    - UTF-8 with some invalid bytes (at least as many valid multi-byte UTF-8 characters as
      invalid sequences, or almost no non-ASCII bytes): kept, each invalid sequence replaced by U+FFFD, an ``invalid_utf8`` warning;
    - otherwise a legacy encoding: charset-normalizer's guess, kept with an ``encoding_guessed``
      warning naming the encoding; no encoding fits -> ``BinaryDocumentError`` (skipped).
    """
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), ()
        except UnicodeDecodeError:
            pass
    if b"\x00" in data[:8192]:
        raise BinaryDocumentError("the file contains NUL bytes: it looks binary, not text")
    try:
        return data.decode("utf-8-sig"), ()
    except UnicodeDecodeError as exc:
        first_bad = exc.start
    replaced = data.decode("utf-8-sig", errors="replace")
    bad = replaced.count("\ufffd") - data.count("\ufffd".encode())
    # bytes of another encoding (GBK, Latin-1) only rarely form valid UTF-8 sequences by chance
    valid_multibyte = sum(1 for ch in replaced if ord(ch) > 127 and ch != "\ufffd")
    non_ascii = sum(1 for byte in data if byte > 127)
    if valid_multibyte >= bad or non_ascii <= max(1, len(data) * _FEW_NON_ASCII):
        return replaced, ((
            "invalid_utf8",
            f"{bad} invalid UTF-8 byte sequence(s), the first at byte {first_bad}, were replaced with U+FFFD; the rest of the text is kept",
        ),)
    text, encoding = _guess_legacy_encoding(data)
    return text, ((
        "encoding_guessed",
        f"not UTF-8; read as {encoding} (charset-normalizer's guess; convert the file to UTF-8 if the text looks wrong)",
    ),)


#: the legacy (Windows) code page texts in a language are usually written in
_LEGACY_ENCODING = {
    **dict.fromkeys("en fr de es it pt nl da sv nb no fi is ca eu gl ga af id ms sw wa lb".split(), "cp1252"),
    **dict.fromkeys("cs pl hu sk sl hr bs sq ro".split(), "cp1250"),
    **dict.fromkeys("ru uk bg be sr mk".split(), "cp1251"),
    "el": "cp1253", "tr": "cp1254", **dict.fromkeys("lt lv et".split(), "cp1257"),
}


def _guess_legacy_encoding(data: bytes) -> tuple[str, str]:
    """charset-normalizer's reading of ``data``, unless it was unsure between code pages that read the bytes equally
    cleanly: then the one the text's language is usually written in (on a short French line it may pick cp1250, where
    "très" reads "trčs"; cp1252, which fits French, read it as cleanly)."""
    from charset_normalizer import from_bytes

    from heta_framework.text.languages import language_code

    candidates = list(from_bytes(data))
    if not candidates:
        raise BinaryDocumentError("the bytes are not UTF-8 and no text encoding fits them: the file looks binary")
    best = candidates[0]
    preferred = _LEGACY_ENCODING.get(language_code(str(best)) or "")
    if preferred is not None and preferred != best.encoding:
        best = next((c for c in candidates if c.encoding == preferred and c.chaos <= best.chaos), best)
    return str(best), best.encoding


def decode_text(data: bytes) -> str:
    """Bytes -> text, as ``decode_text_checked`` without the warnings."""
    return decode_text_checked(data)[0]


def parse_text(data: bytes, name: str) -> ParseResult:
    text, warnings = decode_text_checked(data)
    return ParseResult(text=text, metadata={"encoding_detected": True}, warnings=warnings)


def parse_html(data: bytes, name: str) -> ParseResult:
    from bs4 import BeautifulSoup

    text, warnings = decode_text_checked(data)
    soup = BeautifulSoup(text, "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    title = soup.title.get_text(strip=True) if soup.title else ""
    tables = replace_html_tables(soup)  # each row one line naming its columns, not a run of cells
    text = soup.get_text("\n")
    lines = [line.strip() for line in text.splitlines()]
    cleaned = "\n".join(line for line in lines if line)
    metadata: dict[str, object] = {"title": title} if title else {}
    if tables:
        metadata["tables"] = tables
    return ParseResult(text=cleaned, metadata=metadata, warnings=warnings)


def parse_pdf(data: bytes, name: str) -> ParseResult:
    pypdf = _require("pypdf", "pdf", "Reading PDF files")
    PdfReader, PyPdfError = pypdf.PdfReader, pypdf.errors.PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        numbered: list[tuple[int, str]] = []
        images: list[PageImage] = []
        warnings: list[tuple[str, str]] = []
        # ruled tables as row lines (pdfplumber, if installed), looked for on pages that draw lines
        candidates = [number for number, page in enumerate(reader.pages, start=1) if may_hold_ruled_table(page)]
        table_pages, tables = pdf_table_pages(data, candidates, warnings)
        for number, page in enumerate(reader.pages, start=1):
            text = table_pages.get(number) or (page.extract_text() or "").strip()
            if not text:  # a scanned page: its text is in the page's image, for a vision model or OCR
                image = _page_scan(page, number, warnings)
                if image is not None:
                    images.append(image)
            numbered.append((number, text))
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise DocumentParseError(f"pypdf could not read this PDF: {exc}") from exc
    text, pages = join_pages(numbered)
    metadata: dict[str, object] = {"page_count": len(pages), **({"tables": tables} if tables else {})}
    return ParseResult(text=text, pages=pages, metadata=metadata, images=tuple(images), warnings=tuple(warnings))


_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp"}


def _page_scan(page, number: int, warnings: list[tuple[str, str]]) -> PageImage | None:
    """The largest image of a page with no text layer (the scan), as PNG or JPEG bytes; ``None`` if it has none."""
    try:
        found = [(len(image.data), image) for image in page.images]
    except Exception as exc:  # pypdf decodes image filters through Pillow; a missing codec loses this page only
        warnings.append(("page_image_unreadable", f"page {number} has no text layer and its image could not be decoded ({type(exc).__name__}: {exc})"))
        return None
    if not found:
        return None
    image = max(found, key=lambda pair: pair[0])[1]
    suffix = "." + image.name.rsplit(".", 1)[-1].lower() if "." in image.name else ".png"
    return PageImage(page=number, data=image.data, media_type=_IMAGE_TYPES.get(suffix, "image/png"))


def parse_docx(data: bytes, name: str) -> ParseResult:
    import zipfile

    docx = _require("docx", "docx", "Reading Word files")
    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise DocumentParseError(f"python-docx could not read this Word file: {exc}") from exc
    from docx.table import Table

    blocks: list[str] = []
    tables = 0
    for block in document.iter_inner_content():  # paragraphs and tables in reading order
        if isinstance(block, Table):
            rows = docx_table_rows(block)
            if is_data_table(rows):
                tables += 1
                blocks.append(table_text(rows, table_label("", tables)))
            else:  # a one-row or one-column table is layout: its cells are paragraphs
                blocks.extend(cell for row in rows for cell in row if cell)
        elif block.text.strip():
            blocks.append(block.text)
    return ParseResult(text="\n\n".join(blocks), metadata={"tables": tables} if tables else {})


BUILTIN_PARSERS = (
    DocumentParser("text", (".txt", ".md", ".markdown", ".rst", ".text", ".log"), parse_text, "plain text and Markdown"),
    DocumentParser("html", (".html", ".htm", ".xhtml"), parse_html, "HTML via BeautifulSoup; tables as rows with their header"),
    DocumentParser("pdf", (".pdf",), parse_pdf, "PDF via pypdf, with page numbers; ruled tables as rows with their header (pdfplumber)"),
    DocumentParser("docx", (".docx",), parse_docx, "Word documents via python-docx; tables as rows with their header"),
)
