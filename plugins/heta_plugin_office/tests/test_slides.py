"""Decks written with python-pptx itself, parsed, built into a real knowledge base and queried."""

from __future__ import annotations

from pathlib import Path

import heta_plugin_office
import pytest
from click.testing import CliRunner
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.cli.main import cli
from heta_framework.contracts.documents import DocumentParseError
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.testing import make_registry
from heta_plugin_office.slides import parse_pptx
from pptx import Presentation
from pptx.util import Inches

REGIONS = [("Region", "Reef sites", "Healthy (%)"), ("North", "14", "62"), ("Coral Sea", "9", "48"), ("South", "21", "71")]


def write_deck(path: Path) -> Path:
    """Slide 1 a title slide; 2 bullets, a text box drawn before the one above it, a group, and notes;
    3 empty; 4 a table and notes; 5 a picture-free one-row "table" used for layout."""
    deck = Presentation()
    deck.core_properties.title = "Reef survey 2026"
    title_only, title_content, blank = deck.slide_layouts[5], deck.slide_layouts[1], deck.slide_layouts[6]

    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "Reef survey 2026"
    first.placeholders[1].text = "Findings of the spring dives"

    method = deck.slides.add_slide(title_content)
    method.shapes.title.text = "Method"
    body = method.placeholders[1].text_frame
    body.text = "Divers counted bleached colonies along transects"
    body.add_paragraph().text = "Each transect is fifty metres long"
    # drawn first but lower on the slide: it must read after the bullets, not before
    low = method.shapes.add_textbox(Inches(1), Inches(6.5), Inches(6), Inches(0.5))
    low.text_frame.text = "Footer: survey protocol v3"
    group = method.shapes.add_group_shape()
    grouped = group.shapes.add_textbox(Inches(1), Inches(5.5), Inches(4), Inches(0.5))
    grouped.text_frame.text = "Water temperature logged hourly"
    method.notes_slide.notes_text_frame.text = "Mention that night dives were cancelled."

    deck.slides.add_slide(blank)

    results = deck.slides.add_slide(title_only)
    results.shapes.title.text = "Results by region"
    table = results.shapes.add_table(len(REGIONS), 3, Inches(0.5), Inches(1.5), Inches(8), Inches(2)).table
    for r, row in enumerate(REGIONS):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    results.notes_slide.notes_text_frame.text = "The Coral Sea sites bleached the most."

    layout = deck.slides.add_slide(title_only)
    layout.shapes.title.text = "Next steps"
    strip = layout.shapes.add_table(1, 2, Inches(0.5), Inches(1.5), Inches(8), Inches(1)).table
    strip.cell(0, 0).text = "Repeat in autumn"
    strip.cell(0, 1).text = "Add two sites"
    deck.save(path)
    return path


def _section(result, slide: int) -> str:
    [span] = [s for s in result.pages if s.page == slide]
    return result.text[span.start:span.end]


def test_slides_read_as_sections_with_titles_text_tables_and_notes(tmp_path):
    result = parse_pptx(write_deck(tmp_path / "reef.pptx").read_bytes(), "reef.pptx")

    assert [span.page for span in result.pages] == [1, 2, 4, 5]  # the empty slide 3 keeps its number
    assert result.metadata == {"page_unit": "slide", "slide_count": 5, "tables": 1, "title": "Reef survey 2026"}
    assert _section(result, 1) == "# Slide 1: Reef survey 2026\n\nFindings of the spring dives"
    method = _section(result, 2)
    assert method.startswith("# Slide 2: Method\n\nDivers counted bleached colonies along transects\nEach transect is fifty metres long")
    assert method.index("Water temperature logged hourly") < method.index("Footer: survey protocol v3")  # top to bottom
    assert method.endswith("Speaker notes: Mention that night dives were cancelled.")
    results = _section(result, 4)
    assert results.splitlines()[0] == "# Slide 4: Results by region"
    assert "[Table 1 row 3] Region: Coral Sea | Reef sites: 9 | Healthy (%): 48" in results.splitlines()
    assert results.endswith("Speaker notes: The Coral Sea sites bleached the most.")
    # a one-row table is layout: its cells are plain text, not a numbered table
    assert _section(result, 5) == "# Slide 5: Next steps\n\nRepeat in autumn\n\nAdd two sites"


@pytest.mark.parametrize("data", [b"", b"PK\x03\x04 truncated zip", b"%PDF-1.7 not a deck", bytes(range(256)) * 4])
def test_corrupt_or_empty_files_raise_a_parse_error(data):
    with pytest.raises(DocumentParseError, match="python-pptx could not read this presentation"):
        parse_pptx(data, "broken.pptx")


def write_long_deck(path: Path) -> Path:
    """Four slides; slide 4 a 40-row table, so a chunk can lie wholly inside it."""
    deck = Presentation()
    for number, title in enumerate(("Stock check", "Method", "Warehouses"), start=1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = f"Slide {number} says how the spring stock was counted in each store."
    stock = deck.slides.add_slide(deck.slide_layouts[5])
    stock.shapes.title.text = "Units per store"
    table = stock.shapes.add_table(40, 3, Inches(0.5), Inches(1.5), Inches(8), Inches(5)).table
    for r in range(40):
        row = ("Store", "Product", "Units") if r == 0 else (f"Store {r + 1}", "umbrella" if r + 1 == 27 else "raincoat", str(r * 3))
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    deck.save(path)
    return path


async def test_a_deck_in_a_knowledge_base_answers_with_its_slide(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    write_long_deck(docs / "deck.pptx")
    (docs / "broken.pptx").write_bytes(b"PK\x03\x04 not really a deck")
    (docs / "empty.pptx").write_bytes(b"")
    Presentation().save(docs / "no-slides.pptx")
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=40, chunk_overlap=0), PersistChunks()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=make_registry(heta_plugin_office))
    report = await kb.build([docs])

    issues = {kb.document(i.subject.id).name: i.code for i in report.issues}
    assert issues == {"broken.pptx": "corrupt_document", "empty.pptx": "corrupt_document", "no-slides.pptx": "empty_document"}

    [hit] = (await kb.query("umbrella", mode="sql_text_search", top_k=1)).results
    start, end = hit.metadata["row_start"], hit.metadata["row_end"]
    assert hit.metadata["page"] == 4 and "page_end" not in hit.metadata and hit.metadata["table"] == "Table 1"
    assert start <= 27 <= end and (start, end) != (2, 40)
    assert hit.location == f"deck.pptx slide 4 Table 1 rows {start}-{end}"
    assert (await kb.query("umbrella", mode="sql_text_search", top_k=1)).to_dict()["results"][0]["location"] == hit.location

    # the CLI prints the same place (its registry comes from the installed entry points)
    output = CliRunner().invoke(cli, ["--kb", str(tmp_path / "kb"), "query", "umbrella", "--mode", "sql_text_search", "--top-k", "1"], terminal_width=200)
    assert output.exit_code == 0, output.output
    assert f"deck.pptx slide 4 Table 1 rows {start}-{end}" in output.output


async def test_a_chunk_never_spans_two_slides(tmp_path):
    # short slides and the starter recipe's chunk size: slides would otherwise share chunks ("slides 1-4")
    docs = tmp_path / "docs"
    docs.mkdir()
    write_deck(docs / "reef.pptx")
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=200, chunk_overlap=30), PersistChunks()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=make_registry(heta_plugin_office))
    await kb.build([docs])
    results = (await kb.query("reef survey transects region notes steps", mode="sql_text_search", top_k=20)).results
    assert sorted(r.location for r in results) == [
        "reef.pptx slide 1", "reef.pptx slide 2", "reef.pptx slide 4 Table 1 rows 2-4", "reef.pptx slide 5",
    ]
    [coral] = (await kb.query("Coral Sea bleached", mode="sql_text_search", top_k=1)).results
    assert coral.text.startswith("# Slide 4: Results by region") and coral.text.endswith("The Coral Sea sites bleached the most.")
