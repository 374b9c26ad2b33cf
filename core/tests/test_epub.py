"""EPUB books laid out as the EPUB 3 specification says (mimetype, container, package, spine), parsed and
searched: sections in reading order, tables as rows, a broken or encrypted book an issue, and hits that name
their section."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from heta_framework.builtin.epub import parse_epub
from heta_framework.contracts.documents import DocumentParseError
from heta_framework.kb import KnowledgeBase

CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""

PACKAGE = """<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:3b0f8d9e-1c1a-4d5e-9f00-000000000001</dc:identifier>
    <dc:title>Tides and Harbours</dc:title>
    <dc:language>en</dc:language>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="cover" href="text/cover.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1" href="text/chapter%201.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="text/chapter2.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="img" href="images/cover.png" media-type="image/png"/>
  </manifest>
  <spine>
    <itemref idref="cover"/>
    <itemref idref="nav" linear="no"/>
    <itemref idref="c2"/>
    <itemref idref="c1"/>
  </spine>
</package>"""


def xhtml(title: str, body: str) -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>{title}</title>'
            f"<style>p {{ color: red }}</style></head><body>{body}</body></html>")


def write_book(path: Path, *, encrypted: bool = False) -> Path:
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        book.writestr("META-INF/container.xml", CONTAINER)
        if encrypted:
            book.writestr("META-INF/encryption.xml", "<encryption/>")
        book.writestr("OEBPS/content.opf", PACKAGE)
        book.writestr("OEBPS/nav.xhtml", xhtml("Contents", "<nav><ol><li>Chapter one</li></ol></nav>"))
        book.writestr("OEBPS/text/cover.xhtml", xhtml("Cover", '<img src="../images/cover.png" alt=""/>'))
        book.writestr("OEBPS/text/chapter2.xhtml", xhtml("Spring tides", (
            "<h1>Spring tides</h1><p>At new and full moon the tidal range is greatest.</p>"
            "<table><caption>Ranges</caption><tr><th>Port</th><th>Range (m)</th></tr>"
            "<tr><td>Dover</td><td>6.1</td></tr><tr><td>Avonmouth</td><td>12.2</td></tr></table>")))
        book.writestr("OEBPS/text/chapter 1.xhtml", xhtml("Neap tides", "<h1>Neap tides</h1><p>At the quarter moons the range is least.</p>"))
        book.writestr("OEBPS/style.css", "p { margin: 0 }")
        book.writestr("OEBPS/images/cover.png", b"\x89PNG\r\n\x1a\n")
    return path


def test_sections_follow_the_spine_with_tables_as_rows(tmp_path):
    result = parse_epub(write_book(tmp_path / "tides.epub").read_bytes(), "tides.epub")
    assert result.metadata == {"page_unit": "section", "section_count": 2, "title": "Tides and Harbours", "tables": 1}
    assert [span.page for span in result.pages] == [1, 2]  # the image-only cover spends no number; nav is not linear
    first, second = (result.text[span.start:span.end] for span in result.pages)
    assert first.splitlines() == [
        "Spring tides", "At new and full moon the tidal range is greatest.",
        "[Table 1: Ranges row 2] Port: Dover | Range (m): 6.1", "[Table 1: Ranges row 3] Port: Avonmouth | Range (m): 12.2",
    ]
    assert second == "Neap tides\nAt the quarter moons the range is least."  # an href with %20 is found
    assert "color: red" not in result.text


@pytest.mark.parametrize("data", [b"", b"PK\x03\x04 broken", b"not a zip at all"])
def test_a_file_that_is_not_an_epub_raises_a_parse_error(data):
    with pytest.raises(DocumentParseError):
        parse_epub(data, "broken.epub")


def test_a_zip_without_a_package_raises_a_parse_error(tmp_path):
    path = tmp_path / "bare.epub"
    with zipfile.ZipFile(path, "w") as book:
        book.writestr("mimetype", "application/epub+zip")
    with pytest.raises(DocumentParseError, match="structure is broken"):
        parse_epub(path.read_bytes(), "bare.epub")


async def test_books_in_a_knowledge_base(tmp_path, registry, sql_recipe):
    docs = tmp_path / "docs"
    docs.mkdir()
    write_book(docs / "tides.epub")
    write_book(docs / "locked.epub", encrypted=True)
    (docs / "broken.epub").write_bytes(b"PK\x03\x04 broken")
    kb = KnowledgeBase.create(tmp_path / "kb", sql_recipe, registry=registry)
    report = await kb.build([docs])
    issues = {kb.document(issue.subject.id).name: issue.code for issue in report.issues}
    assert issues == {"locked.epub": "encrypted_document", "broken.epub": "corrupt_document"}
    [hit] = (await kb.query("Avonmouth range", mode="sql_text_search", top_k=1)).results
    assert hit.location == "tides.epub section 1 Table 1: Ranges rows 2-3"
    [neap] = (await kb.query("quarter moons", mode="sql_text_search", top_k=1)).results
    assert neap.location == "tides.epub section 2"
