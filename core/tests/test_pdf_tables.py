"""Ruled tables in PDFs (fpdf2 writes them) are kept as tables through pdfplumber; other pages keep pypdf's text."""

from __future__ import annotations

import io

import pypdf
from fpdf import FPDF
from heta_framework.builtin.parsers import parse_pdf
from heta_framework.builtin.pdf_tables import may_hold_ruled_table
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe
from PIL import Image

TIDES = [("Station", "High tide (m)", "Low tide (m)"), ("Dover", "6.1", "0.8"), ("Brest", "7.3", "1.1"), ("Bergen", "1.6", "0.3")]
CREW = [("Name", "Role"), ("Ada", "Pilot"), ("Grace", "Engineer")]


def add_table(pdf: FPDF, rows) -> None:
    with pdf.table() as table:
        for values in rows:
            row = table.row()
            for value in values:
                row.cell(value)


def report_pdf() -> bytes:
    """Page 1: prose only. Page 2: prose, a table, prose, a second table. Page 3: a scan (an image, no text layer)."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 7, "The coast guard publishes tide readings every month.")
    pdf.add_page()
    pdf.multi_cell(0, 7, "Tide gauges along the coast report these readings.")
    add_table(pdf, TIDES)
    pdf.multi_cell(0, 7, "Readings are taken every hour.")
    add_table(pdf, CREW)
    pdf.add_page()
    scan = io.BytesIO()
    Image.new("L", (200, 80), 255).save(scan, format="PNG")
    pdf.image(scan, x=10, y=10, w=100)
    return bytes(pdf.output())


def test_a_pdf_table_becomes_rows_that_name_their_columns():
    data = report_pdf()
    result = parse_pdf(data, "tides.pdf")
    pages = {span.page: result.text[span.start:span.end] for span in result.pages}
    assert pages[1] == pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text().strip()  # a page with no table: pypdf's text
    assert pages[2].splitlines() == [
        "Tide gauges along the coast report these readings.",
        "[Table 1 row 2] Station: Dover | High tide (m): 6.1 | Low tide (m): 0.8",
        "[Table 1 row 3] Station: Brest | High tide (m): 7.3 | Low tide (m): 1.1",
        "[Table 1 row 4] Station: Bergen | High tide (m): 1.6 | Low tide (m): 0.3",
        "Readings are taken every hour.",
        "[Table 2 row 2] Name: Ada | Role: Pilot",
        "[Table 2 row 3] Name: Grace | Role: Engineer",
    ]
    assert result.metadata == {"page_count": 3, "tables": 2}
    assert [image.page for image in result.images] == [3]  # the scanned page still goes to a vision model or OCR
    # pdfplumber only looks at pages whose content stream draws lines: here page 2
    assert [may_hold_ruled_table(page) for page in pypdf.PdfReader(io.BytesIO(data)).pages] == [False, True, False]


async def test_a_pdf_table_row_is_found_with_its_page_table_and_row(tmp_path, registry):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.pdf").write_bytes(report_pdf())
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=25, chunk_overlap=0), PersistChunks()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build([docs])
    assert [issue.code for issue in report.issues] == ["needs_vision_model"]  # page 3, said so, not silently empty

    [hit] = (await kb.query("Bergen", mode="sql_text_search", top_k=1)).results
    assert "Station: Bergen | High tide (m): 1.6" in hit.text
    assert (hit.metadata["page"], hit.metadata["table"], hit.metadata["row_end"]) == (2, "Table 1", 4)
    start = hit.metadata["row_start"]
    assert hit.location == "tides.pdf p.2 Table 1 " + ("row 4" if start == 4 else f"rows {start}-4")
    assert hit.text.lstrip().startswith(f"[Table 1 row {start}] ")


def test_when_pdfplumber_fails_the_text_stays_as_pypdf_reads_it(monkeypatch):
    import pdfplumber
    from pdfminer.pdfparser import PDFSyntaxError

    def fails(*args, **kwargs):
        raise PDFSyntaxError("No /Root object!")  # what pdfminer raises on a PDF it cannot follow

    monkeypatch.setattr(pdfplumber, "open", fails)
    result = parse_pdf(report_pdf(), "tides.pdf")
    assert [code for code, _ in result.warnings] == ["pdf_tables_unreadable"]
    assert "Dover 6.1 0.8" in result.text and "[Table 1" not in result.text and "tables" not in result.metadata
