""".doc and .ppt through LibreOffice: absent (the real PATH of this machine has no soffice), and present
as a small fake ``soffice`` put on the PATH that writes a real .docx/.pptx (python-docx, python-pptx)
holding the text of the file it was given, so the whole conversion plumbing runs."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import heta_plugin_office
import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.contracts.documents import DocumentParseError
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.testing import make_registry
from heta_plugin_office.legacy import convert, find_converter

FAKE_SOFFICE = """\
#!{python}
# a stand-in for LibreOffice's soffice: same command line, writes a real Office Open XML file
import json, sys, time
from pathlib import Path

args = sys.argv[1:]
Path({log!r}).write_text(json.dumps(args))
mode = {mode!r}
if mode == "hang":
    time.sleep(60)
if mode == "fail":
    sys.stderr.write("Error: source file could not be loaded\\n")
    sys.exit(1)
target = args[args.index("--convert-to") + 1].split(":")[0]
out = Path(args[args.index("--outdir") + 1])
source = Path(args[-1])
text = source.read_bytes().decode("latin-1").split("LEGACY:", 1)[1]
out.mkdir(parents=True, exist_ok=True)
if target == "docx":
    import docx
    document = docx.Document()
    document.add_paragraph(text)
    document.save(out / (source.stem + ".docx"))
else:
    from pptx import Presentation
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Converted deck"
    slide.placeholders[1].text = text
    deck.save(out / (source.stem + ".pptx"))
"""


@pytest.fixture
def no_soffice(monkeypatch, tmp_path):
    """An empty PATH: whatever the machine has, no LibreOffice on it."""
    empty = tmp_path / "bin-without-soffice"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert find_converter() is None


def fake_soffice(monkeypatch, tmp_path, mode: str = "convert") -> Path:
    folder = tmp_path / "fake-bin"
    folder.mkdir(exist_ok=True)
    log = tmp_path / "soffice-args.json"
    script = folder / "soffice"
    script.write_text(FAKE_SOFFICE.format(python=sys.executable, log=str(log), mode=mode))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder) + os.pathsep + os.environ.get("PATH", ""))
    assert find_converter() == str(script)
    return log


# bytes that stand for a binary .doc/.ppt: the fake converter finds the text after the marker
DOC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 binary header LEGACY:The harbour tide tables were revised in March."
PPT = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1 binary header LEGACY:Lighthouse keepers log the fog hours."


def _recipe():
    return Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=60, chunk_overlap=0), PersistChunks()])


async def test_without_libreoffice_a_legacy_file_is_an_issue_naming_both_ways_out(tmp_path, no_soffice):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.doc").write_bytes(DOC)
    (docs / "fog.ppt").write_bytes(PPT)
    (docs / "notes.txt").write_text("Plain notes are still indexed.")
    kb = KnowledgeBase.create(tmp_path / "kb", _recipe(), registry=make_registry(heta_plugin_office))
    report = await kb.build([docs])

    by_name = {kb.document(i.subject.id).name: i for i in report.issues}
    assert set(by_name) == {"tides.doc", "fog.ppt"}
    for issue in by_name.values():
        assert issue.code == "needs_document_converter"
        assert issue.resolution.action == "skipped_document"
        assert "LibreOffice" in issue.resolution.outcome and "soffice" in issue.resolution.outcome
        assert "heta-plugin-mineru" in issue.resolution.outcome and "[parsers.documents.options.mineru]" in issue.resolution.outcome
    assert [r.metadata["name"] for r in (await kb.query("notes", mode="sql_text_search")).results] == ["notes.txt"]


async def test_with_libreoffice_doc_and_ppt_are_converted_and_read(tmp_path, monkeypatch):
    log = fake_soffice(monkeypatch, tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.doc").write_bytes(DOC)
    (docs / "fog.ppt").write_bytes(PPT)
    kb = KnowledgeBase.create(tmp_path / "kb", _recipe(), registry=make_registry(heta_plugin_office))
    report = await kb.build([docs])
    assert not report.issues

    [tide] = (await kb.query("harbour tide tables", mode="sql_text_search", top_k=1)).results
    assert tide.text == "The harbour tide tables were revised in March."
    assert (tide.metadata["name"], tide.metadata["converted_from"], tide.metadata["converter"]) == ("tides.doc", "doc", "libreoffice")
    [fog] = (await kb.query("lighthouse fog", mode="sql_text_search", top_k=1)).results
    assert fog.text == "# Slide 1: Converted deck\n\nLighthouse keepers log the fog hours."
    assert fog.location == "fog.ppt slide 1"  # read by the pptx parser after conversion, slides and all

    args = json.loads(log.read_text())  # the last conversion's command line
    assert args[:3] == ["--headless", "--norestore", "--nolockcheck"]
    assert args[3].startswith("-env:UserInstallation=file://")  # a throw-away profile, never the user's
    assert args[args.index("--convert-to") + 1] in {"docx:MS Word 2007 XML", "pptx:Impress MS PowerPoint 2007 XML"}
    assert not Path(args[-1]).exists()  # the temporary folder is gone


def test_a_failed_conversion_says_what_libreoffice_said(tmp_path, monkeypatch):
    fake_soffice(monkeypatch, tmp_path, mode="fail")
    with pytest.raises(DocumentParseError) as caught:
        convert(DOC, "tides.doc")
    assert caught.value.code == "document_conversion_failed"
    assert "exit code 1" in str(caught.value) and "source file could not be loaded" in str(caught.value)


def test_a_hung_conversion_is_killed_at_the_time_out(tmp_path, monkeypatch):
    fake_soffice(monkeypatch, tmp_path, mode="hang")
    started = time.monotonic()
    with pytest.raises(DocumentParseError) as caught:
        convert(DOC, "tides.doc", timeout=1.0)
    assert time.monotonic() - started < 10
    assert caught.value.code == "document_conversion_failed" and "within 1 s" in str(caught.value)
    assert "timeout_seconds" in caught.value.outcome


async def test_the_time_out_comes_from_the_recipe(tmp_path, monkeypatch):
    fake_soffice(monkeypatch, tmp_path, mode="hang")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "tides.doc").write_bytes(DOC)
    registry = make_registry(heta_plugin_office)
    recipe = Recipe.from_dict({
        "parsers": {"documents": {"options": {"legacy_office": {"timeout_seconds": 0.5}}}},
        "steps": [{"step": "parse_documents"}, {"step": "split_documents"}, {"step": "persist_chunks"}],
    }, registry)
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    started = time.monotonic()
    report = await kb.build([docs])
    assert time.monotonic() - started < 10
    [issue] = report.issues
    assert issue.code == "document_conversion_failed" and "within 0.5 s" in issue.message


def test_the_real_machine_path_is_what_the_no_soffice_test_assumes():
    # the no-soffice test empties PATH; this one says whether the machine itself has LibreOffice, so a
    # reader of the test run knows which path ran for real
    found = shutil.which("soffice") or shutil.which("libreoffice")
    if found:
        pytest.skip(f"LibreOffice is installed here ({found}); the no-soffice path is tested with an emptied PATH")
    assert find_converter() is None

