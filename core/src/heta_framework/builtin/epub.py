"""The ``epub`` parser: an e-book's documents in reading order, one section each.

An EPUB is a zip of XHTML files; ``META-INF/container.xml`` names the package file, whose
``spine`` lists them in reading order. That is all a reader needs, so this parser uses the
standard library's zipfile and BeautifulSoup (already a core dependency) rather than an
e-book library: nothing more to install. Each spine document with text is a section
(its tables as rows with their header, as HTML pages get), numbered by its place among
the book's sections, and the document says ``page_unit = "section"``, so a hit reads
``book.epub section 3``. DRM-protected books (``META-INF/encryption.xml``) cannot be read
and say so.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from typing import Any
from urllib.parse import unquote

from heta_framework.builtin.embedded_tables import replace_html_tables
from heta_framework.contracts.documents import DocumentParseError, DocumentParser, ParseResult, join_pages

#: a spine document larger than this (uncompressed) is not a chapter but a zip bomb or a data dump
_MAX_MEMBER_BYTES = 50 * 1024 * 1024
_XHTML = ("application/xhtml+xml", "text/html")


def _read(book: zipfile.ZipFile, name: str) -> bytes:
    info = book.getinfo(name)
    if info.file_size > _MAX_MEMBER_BYTES:
        raise DocumentParseError(f"{name} inside the book is {info.file_size} bytes uncompressed: too large to be a chapter")
    return book.read(info)


def _soup(data: bytes) -> Any:
    import warnings

    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    # html.parser on XML on purpose: it expands no entities, so a hostile book cannot grow in memory,
    # and it needs no lxml; bs4 warns about exactly that choice
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        return BeautifulSoup(data, "html.parser")


def _spine(book: zipfile.ZipFile) -> tuple[list[str], str]:
    """The zip names of the spine's content documents in reading order, and the book's title."""
    container = _soup(_read(book, "META-INF/container.xml")).find("rootfile")
    if container is None or not container.get("full-path"):
        raise DocumentParseError("META-INF/container.xml names no package file")
    package_path = container["full-path"]
    package = _soup(_read(book, package_path))
    base = posixpath.dirname(package_path)
    manifest = {
        item.get("id"): item for item in package.find_all("item") if item.get("id") and item.get("href")
    }
    names = []
    for itemref in package.find_all("itemref"):
        item = manifest.get(itemref.get("idref"))
        if item is None or itemref.get("linear") == "no" or item.get("media-type") not in _XHTML:
            continue
        names.append(posixpath.normpath(posixpath.join(base, unquote(item["href"]))))
    title = package.find("dc:title")
    return names, " ".join(title.get_text().split()) if title is not None else ""


def _section_text(data: bytes) -> tuple[str, int]:
    soup = _soup(data)
    for tag in soup(["script", "style", "noscript", "template", "head"]):
        tag.decompose()
    tables = replace_html_tables(soup)
    lines = [line.strip() for line in soup.get_text("\n").splitlines()]
    return "\n".join(line for line in lines if line), tables


def parse_epub(data: bytes, name: str) -> ParseResult:
    try:
        book = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise DocumentParseError(f"not a readable EPUB (zip) file: {exc}") from exc
    with book:
        if "META-INF/encryption.xml" in book.namelist():
            raise DocumentParseError("the book is encrypted (DRM): its text cannot be read", code="encrypted_document",
                                     outcome="Not indexed. Use a copy without DRM.")
        try:
            names, title = _spine(book)
            present = set(book.namelist())
            sections = [_section_text(_read(book, member)) for member in names if member in present]
        except (KeyError, zipfile.BadZipFile, ValueError, OSError) as exc:
            raise DocumentParseError(f"the EPUB's structure is broken: {type(exc).__name__}: {exc}") from exc
    tables = sum(found for _, found in sections)
    # a cover image or a blank page: no section number is spent on it
    numbered = [(number, text) for number, text in enumerate((text for text, _ in sections if text), start=1)]
    text, pages = join_pages(numbered)
    metadata: dict[str, object] = {"page_unit": "section", "section_count": len(numbered)}
    if title:
        metadata["title"] = title
    if tables:
        metadata["tables"] = tables
    return ParseResult(text=text, pages=pages, metadata=metadata)


EPUB_PARSER = DocumentParser(
    "epub", (".epub",), parse_epub,
    "EPUB e-books: each document of the reading order a section (tables as rows with their header)",
)
