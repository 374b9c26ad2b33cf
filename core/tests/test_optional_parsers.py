"""pypdf and python-docx are extras of heta-core: without them such files become an issue naming the extra."""

from __future__ import annotations

import sys

import pytest
from fpdf import FPDF
from heta_framework.kb import KnowledgeBase


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 10, "Penicillin was discovered by Alexander Fleming in 1928.")
    pdf.output(str(docs / "fleming.pdf"))
    (docs / "notes.txt").write_text("Plain text needs no extra.")
    return docs


async def test_a_missing_parser_library_is_an_issue_and_the_build_goes_on(monkeypatch, tmp_path, registry, sql_recipe, folder):
    blocked = "pypdf"
    for module in [m for m in sys.modules if m == blocked or m.startswith(blocked + ".")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, blocked, None)  # import fails as it does when the extra is not installed
    kb = KnowledgeBase.create(tmp_path / "kb", sql_recipe, registry=registry)
    report = await kb.build([folder])
    [issue] = [i for i in report.issues if i.code == "parser_dependency_missing"]
    assert kb.document(issue.subject.id).name == "fleming.pdf"
    assert "pip install 'heta-core[pdf]'" in issue.message
    names = [r.metadata["name"] for r in (await kb.query("extra", mode="sql_text_search")).results]
    assert names == ["notes.txt"]

    monkeypatch.undo()  # the extra is installed now: a rebuild indexes the PDF
    report = await kb.build(rebuild=True)
    assert not [i for i in report.issues if i.code == "parser_dependency_missing"]
    names = [r.metadata["name"] for r in (await kb.query("Fleming penicillin", mode="sql_text_search")).results]
    assert names == ["fleming.pdf"]
