"""Tables inside HTML pages and Word files stay tables: each row one line naming its columns."""

from __future__ import annotations

import io

import docx
from heta_framework.builtin.parsers import parse_docx, parse_html
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe

CREW_PAGE = b"""<html><head><title>Station</title></head><body><h1>Crew</h1>
<table><caption>Station crew</caption>
<thead><tr><th>Name</th><th>Role</th><th>Since</th></tr></thead>
<tbody>
<tr><td rowspan="2">Ada</td><td>Pilot</td><td>2020</td></tr>
<tr><td>Medic</td><td>2022</td></tr>
<tr><td colspan="2">Vacant</td><td>2024</td></tr>
</tbody></table>
<table><tr><td>A one-cell layout table keeps its text.</td></tr></table>
<p>After the table.</p></body></html>"""


def word_file(rows, *, merge_first_column=False) -> bytes:
    document = docx.Document()
    document.add_paragraph("Metals we keep in the workshop.")
    table = document.add_table(rows=len(rows), cols=len(rows[0]))
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            table.cell(i, j).text = value
    if merge_first_column:
        table.cell(0, 0).merge(table.cell(0, 1))
    document.add_paragraph("Handle lead with gloves.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_an_html_table_becomes_rows_that_name_their_columns():
    result = parse_html(CREW_PAGE, "station.html")
    lines = result.text.splitlines()
    assert lines[:6] == [
        "Station",
        "Crew",
        "[Table 1: Station crew row 2] Name: Ada | Role: Pilot | Since: 2020",
        "[Table 1: Station crew row 3] Name: Ada | Role: Medic | Since: 2022",  # the rowspan cell repeats
        "[Table 1: Station crew row 4] Name: Vacant | Since: 2024",  # a colspan cell fills its first column only
        "A one-cell layout table keeps its text.",
    ]
    assert lines[-1] == "After the table."
    assert result.metadata == {"title": "Station", "tables": 1}


def test_a_table_nested_in_a_cell_is_read_as_its_own_table():
    page = b"""<table><tr><th>Region</th><th>Notes</th></tr><tr><td>North</td><td>cold</td></tr>
    <tr><td>South</td><td><table><tr><th>Month</th><th>Rain</th></tr><tr><td>May</td><td>80 mm</td></tr></table></td></tr></table>"""
    lines = parse_html(page, "nested.html").text.splitlines()
    assert "[Table 1 row 2] Region: North | Notes: cold" in lines
    assert any(line.startswith("[Table 1 row 3] Region: South | Notes: [Table 2 row 2] Month: May | Rain: 80 mm") for line in lines)


def test_a_word_table_is_read_in_place_with_its_header():
    rows = [("Metal", "Melting point"), ("Tin", "232 C"), ("Lead", "327 C")]
    result = parse_docx(word_file(rows), "metals.docx")
    assert result.text.split("\n\n") == [
        "Metals we keep in the workshop.",
        "[Table 1 row 2] Metal: Tin | Melting point: 232 C\n[Table 1 row 3] Metal: Lead | Melting point: 327 C",
        "Handle lead with gloves.",  # the paragraph after the table stays after it
    ]
    assert result.metadata["tables"] == 1


def test_a_merged_word_cell_is_not_repeated_across_the_columns_it_covers():
    rows = [("Metals", "", "Note"), ("Tin", "232 C", "soft")]
    text = parse_docx(word_file(rows, merge_first_column=True), "merged.docx").text
    assert "[Table 1 row 2] Metals: Tin | B: 232 C | Note: soft" in text


async def test_every_chunk_of_a_long_table_carries_the_header(tmp_path, registry):
    """The chunker may cut a table anywhere between rows: each row still names its columns."""
    body = "".join(f"<tr><td>Probe {n}</td><td>{100 + n} kg</td><td>Orbit {n % 7}</td></tr>" for n in range(60))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "probes.html").write_text(f"<table><tr><th>Probe</th><th>Mass</th><th>Destination</th></tr>{body}</table>")
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=40, chunk_overlap=0), PersistChunks()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    await kb.build([docs])

    results = (await kb.query("Probe Mass Destination", mode="sql_text_search", top_k=50)).results
    assert len(results) > 3  # the table really was cut into several chunks
    for result in results:
        for line in result.text.splitlines():
            assert line.startswith("[Table 1 row ") and "Probe: Probe" in line and "| Mass: " in line and "| Destination: Orbit" in line
    [hit] = (await kb.query("142", mode="sql_text_search", top_k=1)).results
    assert "[Table 1 row 44] Probe: Probe 42 | Mass: 142 kg | Destination: Orbit 0" in hit.text
