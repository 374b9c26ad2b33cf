"""Document parsers for text, Markdown, HTML, PDF and Word files, built on well-kept libraries."""

from __future__ import annotations

import io

from heta_framework.kb.documents import DocumentParseError, DocumentParser, PageSpan, ParseResult


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


def decode_text(data: bytes) -> str:
    """Bytes -> text: UTF-8 (with or without BOM) first, then charset-normalizer's best guess."""
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise BinaryDocumentError("the file contains NUL bytes: it looks binary, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise BinaryDocumentError("no text encoding fits these bytes: the file looks binary")
    return str(best)


def parse_text(data: bytes, name: str) -> ParseResult:
    text = decode_text(data)
    return ParseResult(text=text, metadata={"encoding_detected": True})


def parse_html(data: bytes, name: str) -> ParseResult:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(decode_text(data), "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    title = soup.title.get_text(strip=True) if soup.title else ""
    text = soup.get_text("\n")
    lines = [line.strip() for line in text.splitlines()]
    cleaned = "\n".join(line for line in lines if line)
    return ParseResult(text=cleaned, metadata={"title": title} if title else {})


def parse_pdf(data: bytes, name: str) -> ParseResult:
    pypdf = _require("pypdf", "pdf", "Reading PDF files")
    PdfReader, PyPdfError = pypdf.PdfReader, pypdf.errors.PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        pieces: list[str] = []
        pages: list[PageSpan] = []
        offset = 0
        for number, page in enumerate(reader.pages, start=1):
            text = (page.extract_text() or "").strip()
            if pieces:
                pieces.append("\n\n")
                offset += 2
            pages.append(PageSpan(start=offset, end=offset + len(text), page=number))
            pieces.append(text)
            offset += len(text)
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise DocumentParseError(f"pypdf could not read this PDF: {exc}") from exc
    return ParseResult(text="".join(pieces), pages=tuple(pages), metadata={"page_count": len(pages)})


def parse_docx(data: bytes, name: str) -> ParseResult:
    import zipfile

    docx = _require("docx", "docx", "Reading Word files")
    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise DocumentParseError(f"python-docx could not read this Word file: {exc}") from exc
    paragraphs = [p.text for p in document.paragraphs if p.text.strip()]
    for table in document.tables:
        for row in table.rows:
            paragraphs.append(" | ".join(cell.text.strip() for cell in row.cells))
    return ParseResult(text="\n\n".join(paragraphs))


BUILTIN_PARSERS = (
    DocumentParser("text", (".txt", ".md", ".markdown", ".rst", ".text", ".csv", ".log"), parse_text, "plain text and Markdown"),
    DocumentParser("html", (".html", ".htm", ".xhtml"), parse_html, "HTML via BeautifulSoup"),
    DocumentParser("pdf", (".pdf",), parse_pdf, "PDF via pypdf, with page numbers"),
    DocumentParser("docx", (".docx",), parse_docx, "Word documents via python-docx"),
)
