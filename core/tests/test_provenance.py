"""Chunks carry page, sheet/table and row provenance, and results say it in words (CLI and to_dict)."""

from __future__ import annotations

import json

from click.testing import CliRunner
from fpdf import FPDF
from heta_framework.cli.main import cli
from heta_framework.kb.provenance import describe_location, table_provenance

SQL_RECIPE = """
[[steps]]
step = "parse_documents"

[[steps]]
step = "split_documents"
chunk_size = 60
chunk_overlap = 0

[[steps]]
step = "persist_chunks"
"""


def test_row_lines_give_the_table_and_row_range_of_a_chunk():
    text = "[Q1 row 7] Region: North | Sales: 10\n[Q1 row 8] Region: South | Sales: 12\n[Q2 row 2] Region: East"
    assert table_provenance(text, {"sheets": ["Q1", "Q2"]}) == {"sheet": "Q1", "row_start": 7, "row_end": 8}
    assert table_provenance(text, {}) == {"table": "Q1", "row_start": 7, "row_end": 8}
    # a chunk cut inside a row line (no label at its start) still gets the rows it holds whole
    assert table_provenance("ion: West | Sales: 3\n[Table 2: Staff row 5] Name: Ada", {}) == {
        "table": "Table 2: Staff", "row_start": 5, "row_end": 5}
    # prose, and a row label in the middle of a line (a table nested in a cell), are no table rows
    assert table_provenance("Sales rose. See [Q1 row 7] Region: North.", {}) == {}


def test_locations_read_like_a_citation():
    assert describe_location({"source": "/d/report.pdf", "page": 3}) == "report.pdf p.3"
    assert describe_location({"source": "/d/sales.xlsx", "page": 1, "sheet": "Q1", "row_start": 2, "row_end": 40}) == (
        "sales.xlsx sheet Q1 rows 2-40")
    assert describe_location({"source": "/d/visits.csv", "table": "visits", "row_start": 4, "row_end": 4}) == "visits.csv row 4"
    assert describe_location({"source": "/d/r.pdf", "page": 2, "table": "Table 1", "row_start": 2, "row_end": 3}) == (
        "r.pdf p.2 Table 1 rows 2-3")
    assert describe_location({"source": "/d/r.pdf", "page": 2, "page_end": 3}) == "r.pdf pp.2-3"
    assert describe_location({"source": "/d/scan.png", "page": 1, "media_type": "image/png"}) == "scan.png"
    assert describe_location({"source": "notes", "name": "document.txt"}) == "notes"
    assert describe_location({}) == ""


def two_page_pdf() -> bytes:
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    for text in ("The harbour opens at dawn.", "Lighthouse keepers log every passing ship."):
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_heta_query_shows_page_and_rows_and_json_has_location(tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "harbour.pdf").write_bytes(two_page_pdf())
    rows = "\n".join(f"Ship{n},{'tanker' if n == 33 else 'ferry'},Pier {n}" for n in range(2, 60))
    (docs / "ships.csv").write_text("Ship,Kind,Berth\n" + rows + "\n")
    recipe = tmp_path / "sql.toml"
    recipe.write_text(SQL_RECIPE)
    kb = str(tmp_path / "kb")
    run("--kb", kb, "init", "--recipe", str(recipe))
    run("--kb", kb, "build", str(docs))

    lighthouse = json.loads(run("--kb", kb, "query", "lighthouse keepers", "--mode", "sql_text_search", "--json"))
    [top] = lighthouse["results"][:1]
    # both short pages fit one chunk: it starts on page 1 and ends on page 2
    assert (top["metadata"]["page"], top["metadata"]["page_end"], top["location"]) == (1, 2, "harbour.pdf pp.1-2")
    assert "harbour.pdf pp.1-2" in run("--kb", kb, "query", "lighthouse keepers", "--mode", "sql_text_search")

    tanker = json.loads(run("--kb", kb, "query", "tanker", "--mode", "sql_text_search", "--json"))["results"][0]
    start, end = tanker["metadata"]["row_start"], tanker["metadata"]["row_end"]
    assert tanker["metadata"]["table"] == "ships" and start <= 33 <= end < 60  # the tanker is on the CSV's row 33
    assert [line.split("]")[0] for line in tanker["text"].splitlines() if line.startswith("[")][0] == f"[ships row {start}"
    assert tanker["location"] == f"ships.csv rows {start}-{end}"
    assert f"ships.csv rows {start}-{end}" in run("--kb", kb, "query", "tanker", "--mode", "sql_text_search")
