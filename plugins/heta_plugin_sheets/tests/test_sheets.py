"""Spreadsheets built with real writers (openpyxl, odfpy), parsed and searched in a real knowledge base."""

from __future__ import annotations

from pathlib import Path

import heta_plugin_sheets
import openpyxl
import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.builtin.steps.parse import parsed_key
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.testing import make_registry
from heta_plugin_sheets.parsers import parse_ods, parse_xlsx

STAFF = [("Name", "Age", "City"), ("Alice", 30, "Paris"), ("Bob", None, "Lagos"), (None, None, None), ("Chen", 41, "Chengdu")]
BUDGET = [("Item", "Cost"), ("Telescope", 1250.0), ("Star charts", 80.5)]


def write_xlsx(path: Path) -> Path:
    workbook = openpyxl.Workbook()
    staff = workbook.active
    staff.title = "Staff"
    for row in STAFF:
        staff.append(row)
    budget = workbook.create_sheet("Budget")
    for row in BUDGET:
        budget.append(row)
    workbook.create_sheet("Empty")
    workbook.save(path)
    return path


def write_ods(path: Path) -> Path:
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    document = OpenDocumentSpreadsheet()
    for name, rows in (("Staff", STAFF), ("Budget", BUDGET)):
        table = Table(name=name)
        for row in rows:
            table_row = TableRow()
            for value in row:
                if isinstance(value, (int, float)):
                    cell = TableCell(valuetype="float", value=value)
                    cell.addElement(P(text=str(value)))
                else:
                    cell = TableCell()
                    if value is not None:
                        cell.addElement(P(text=value))
                table_row.addElement(cell)
            table.addElement(table_row)
        document.spreadsheet.addElement(table)
    document.save(str(path))
    return path


@pytest.mark.parametrize(("writer", "parse", "suffix"), [(write_xlsx, parse_xlsx, ".xlsx"), (write_ods, parse_ods, ".ods")])
def test_each_row_carries_its_header_sheet_and_row_number(tmp_path, writer, parse, suffix):
    path = writer(tmp_path / f"book{suffix}")
    result = parse(path.read_bytes(), path.name)
    lines = result.text.splitlines()
    assert lines[0] == "# Sheet: Staff"
    assert "[Staff row 2] Name: Alice | Age: 30 | City: Paris" in lines
    assert "[Staff row 3] Name: Bob | City: Lagos" in lines  # the empty cell is left out
    assert "[Staff row 5] Name: Chen | Age: 41 | City: Chengdu" in lines  # row numbers survive the blank row 4
    assert "[Budget row 3] Item: Star charts | Cost: 80.5" in lines
    assert result.metadata["sheets"] == ["Staff", "Budget"]  # the empty sheet is no section
    [staff, budget] = result.pages
    assert result.text[staff.start:staff.end].startswith("# Sheet: Staff")
    assert result.text[budget.start:budget.end].startswith("# Sheet: Budget") and budget.page == 2


async def test_a_workbook_in_a_knowledge_base_answers_with_sheet_and_row(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    write_xlsx(docs / "observatory.xlsx")
    (docs / "broken.xlsx").write_bytes(b"PK\x03\x04 not really a workbook")
    (docs / "visits.csv").write_text("Visitor;Planet;Night\nAda;Saturn;Friday\nGrace;Jupiter;Monday\n")
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=16, chunk_overlap=0), PersistChunks()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=make_registry(heta_plugin_sheets))
    report = await kb.build([docs])

    [broken] = [i for i in report.issues if i.code == "corrupt_document"]
    assert kb.document(broken.subject.id).name == "broken.xlsx"

    [hit] = (await kb.query("telescope cost", mode="sql_text_search", top_k=1)).results
    assert "[Budget row 2] Item: Telescope | Cost: 1250" in hit.text
    assert hit.metadata["page"] == 2 and hit.metadata["name"] == "observatory.xlsx"

    [visit] = (await kb.query("Grace Jupiter", mode="sql_text_search", top_k=1)).results
    assert visit.metadata["name"] == "visits.csv"
    parsed = kb.objects.get_json(parsed_key(visit.metadata["document_id"]))
    assert parsed["text"].splitlines()[1] == "[visits row 3] Visitor: Grace | Planet: Jupiter | Night: Monday"  # core's csv parser


async def test_results_name_the_sheet_and_rows_they_come_from(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    workbook = openpyxl.Workbook()
    workbook.active.title = "Notes"
    workbook.active.append(("Note",))
    workbook.active.append(("Sales are counted per quarter.",))
    quarter = workbook.create_sheet("Q1")
    quarter.append(("Store", "Product", "Units"))
    for number in range(2, 41):
        quarter.append((f"Store {number}", "umbrella" if number == 27 else "raincoat", number * 3))
    workbook.save(docs / "sales.xlsx")
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=40, chunk_overlap=0), PersistChunks()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=make_registry(heta_plugin_sheets))
    await kb.build([docs])

    [hit] = (await kb.query("umbrella", mode="sql_text_search", top_k=1)).results
    start, end = hit.metadata["row_start"], hit.metadata["row_end"]
    assert hit.metadata["sheet"] == "Q1" and "table" not in hit.metadata
    assert start <= 27 <= end and (start, end) != (2, 40)  # the chunk holds some of the sheet's rows, the umbrella's among them
    assert f"[Q1 row {start}] " in hit.text and f"[Q1 row {end}] " in hit.text and f"[Q1 row {end + 1}] " not in hit.text
    assert hit.location == f"sales.xlsx sheet Q1 rows {start}-{end}"
    assert (await kb.query("umbrella", mode="sql_text_search", top_k=1)).to_dict()["results"][0]["location"] == hit.location
