"""Results keep their place: a hit in a slide (heta-plugin-office) or in a PDF table read by the layout service
(heta-plugin-mineru, a scripted server on 127.0.0.1 replaying a recorded answer) reads ``deck.pptx slide 3 ...`` /
``report.pdf p.12 Table 2: ...`` alike in ``heta query``, the HTTP API's JSON and the console's document view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from fpdf import FPDF
from heta_framework.cli.main import cli
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.plugins.registry import PluginRegistry
from heta_framework.testing.http import ScriptedServer
from heta_server.app import create_app
from pptx import Presentation
from pptx.util import Inches

RECORDED = Path(__file__).resolve().parent.parent / "plugins" / "heta_plugin_mineru" / "tests" / "recorded" / "file_parse_report_pdf.json"
STEPS = [{"step": "parse_documents"}, {"step": "split_documents", "chunk_size": 60, "chunk_overlap": 0}, {"step": "persist_chunks"}]


def write_deck(path: Path) -> None:
    deck = Presentation()
    for title in ("Harbour works", "Budget"):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text_frame.text = f"{title}: what the board approved in March."
    gauges = deck.slides.add_slide(deck.slide_layouts[5])
    gauges.shapes.title.text = "Tide gauges"
    table = gauges.shapes.add_table(3, 2, Inches(0.5), Inches(1.5), Inches(8), Inches(2)).table
    for r, row in enumerate((("Gauge", "Installed"), ("Breakwater head", "2019"), ("Lock gate", "2022"))):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    deck.save(path)


@pytest.fixture(scope="module")
def kb_path(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("locations")
    docs = root / "docs"
    docs.mkdir()
    write_deck(docs / "deck.pptx")
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 10, "A local text layer the layout service's answer replaces.")
    pdf.output(str(docs / "report.pdf"))
    registry = PluginRegistry.from_entry_points(strict=True)
    with ScriptedServer(prefix="") as service:
        service.enqueue("/file_parse", body=json.loads(RECORDED.read_text()))
        recipe = Recipe.from_dict({"parsers": {"documents": {"options": {"mineru": {"endpoint": service.url, "fallback": False}}}},
                                   "steps": STEPS}, registry)
        kb = KnowledgeBase.create(root / "kb", recipe, registry=registry)
        report = kb.sync.build([docs])
        kb.close()
        service.check()
    assert not report.issues
    return root / "kb"


QUERIES = {
    "Lock gate installed": "deck.pptx slide 3 Table 1 rows 2-3",
    "Seaford Road pumping capacity": "report.pdf p.12 Table 2: Pumping stations rows 2-3",
}


def test_the_cli_prints_the_place(kb_path):
    for text, where in QUERIES.items():
        output = CliRunner().invoke(cli, ["--kb", str(kb_path), "query", text, "--mode", "sql_text_search", "--top-k", "1"], terminal_width=200)
        assert output.exit_code == 0, output.output
        assert where in output.output


def test_the_api_and_the_console_give_the_place(kb_path):
    kb = KnowledgeBase.load(kb_path)
    try:
        with TestClient(create_app(kb, warm=False)) as client:
            for text, where in QUERIES.items():
                reply = client.post("/api/v1/query", json={"text": text, "mode": "sql_text_search", "top_k": 1})
                assert reply.status_code == 200, reply.text
                [result] = reply.json()["results"]
                assert result["location"] == where
            deck = next(d for d in kb.documents.values() if d.name == "deck.pptx")
            view = client.get(f"/api/v1/console/documents/{deck.id}")
            assert view.status_code == 200, view.text
            assert [c["location"] for c in view.json()["chunk_texts"]] == ["deck.pptx slide 1", "deck.pptx slide 2", QUERIES["Lock gate installed"]]
    finally:
        kb.close()
