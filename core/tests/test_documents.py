"""Parsing real files of every supported type; bad documents become issues and the build goes on."""

from __future__ import annotations

import docx
import pytest
from fpdf import FPDF
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument


def write_pdf(path, pages):
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 10, text)
    pdf.output(str(path))


@pytest.fixture
def mixed_folder(tmp_path):
    folder = tmp_path / "mixed"
    folder.mkdir()
    write_pdf(folder / "report.pdf", ["Page one talks about glaciers.", "Page two talks about volcanoes."])
    document = docx.Document()
    document.add_paragraph("Word files mention tardigrades.")
    document.save(folder / "notes.docx")
    (folder / "page.html").write_text(
        "<html><head><title>Kelp</title><script>var secret='do not index';</script></head>"
        "<body><p>Kelp forests shelter otters.</p></body></html>"
    )
    (folder / "latin1.txt").write_bytes("Crème brûlée à la française, naïve façade.".encode("latin-1"))
    (folder / "empty.md").write_text("   \n\n")
    (folder / "image.txt").write_bytes(bytes(range(256)) * 4)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\nthis is not really a pdf")
    (folder / "broken.docx").write_bytes(b"PK\x03\x04 not a zip")
    (folder / "archive.zip").write_bytes(b"PK\x03\x04")
    (folder / "big.txt").write_text("word " * 300_000)
    return folder


async def test_every_type_parses_and_bad_files_become_issues(tmp_path, registry, mixed_folder):
    recipe = Recipe(steps=[ParseDocuments(max_document_mb=1.0), SplitDocuments(chunk_size=6, chunk_overlap=0), PersistChunks()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build([mixed_folder])

    codes = {(issue.code, kb.documents[issue.subject.id].name) for issue in report.issues}
    assert codes == {
        ("empty_document", "empty.md"),
        ("binary_document", "image.txt"),
        ("corrupt_document", "broken.pdf"),
        ("corrupt_document", "broken.docx"),
        ("unsupported_document_type", "archive.zip"),
        ("document_too_large", "big.txt"),
        ("encoding_guessed", "latin1.txt"),  # not UTF-8: kept, but never silently
    }
    assert all(
        issue.resolution and issue.resolution.action == ("kept_document" if issue.code == "encoding_guessed" else "skipped_document")
        for issue in report.issues
    )
    # the build went on and the good documents are searchable
    volcano = (await kb.query("volcanoes", mode="sql_text_search")).results[0]
    assert volcano.metadata["name"] == "report.pdf" and volcano.metadata["page"] == 2
    glacier = (await kb.query("glaciers", mode="sql_text_search")).results[0]
    assert glacier.metadata["page"] == 1
    assert (await kb.query("tardigrades", mode="sql_text_search")).results[0].metadata["name"] == "notes.docx"
    kelp = (await kb.query("otters", mode="sql_text_search")).results[0]
    assert "do not index" not in kelp.text and kelp.metadata["title"] == "Kelp"
    assert (await kb.query("brûlée", mode="sql_text_search")).results[0].metadata["name"] == "latin1.txt"
    assert not (await kb.query("secret", mode="sql_text_search")).results
    # issues are persisted in the run record
    assert len(kb.run_record.all_issues()) == 7


async def test_source_documents_without_files(sql_kb):
    await sql_kb.build(
        [SourceDocument(text="Narwhals have a long tusk.", id="narwhal", metadata={"topic": "ocean"}),
         SourceDocument(text="Cacti store water.", id="cactus", metadata={"topic": "desert"})]
    )
    hits = (await sql_kb.query("tusk water", mode="sql_text_search", filters={"topic": "ocean"})).results
    assert [h.document_id for h in hits] == ["narwhal"]
    assert hits[0].metadata["topic"] == "ocean"


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        ("Le café est très bon.", "latin-1"),  # charset-normalizer alone read "trčs" (cp1250)
        ("El niño comió piña en la mañana.", "cp1252"),
        ("Où est la gare ? Je préfère le thé à la crème brûlée.", "cp1252"),
        ("Dobrý večer, jak se máte?", "cp1250"),  # a Czech line stays Czech
        ("Zażółć gęślą jaźń, mówię.", "cp1250"),
        ("Привет, как дела? Это тест.", "cp1251"),
        ("上海市是中国的直辖市之一。", "gbk"),
    ],
)
def test_a_short_legacy_line_is_read_in_the_code_page_its_language_uses(text, encoding):
    from heta_framework.builtin.parsers import decode_text_checked

    decoded, warnings = decode_text_checked(text.encode(encoding))
    assert decoded == text
    assert [code for code, _ in warnings] == ["encoding_guessed"]  # kept, and never silently


async def test_a_recipe_names_the_encoding_of_a_folder(tmp_path, registry):
    from heta_framework.errors import RecipeError

    legacy = tmp_path / "docs" / "legacy"
    legacy.mkdir(parents=True)
    # cp1250 bytes that a guess reads as cp1250 too; the recipe says this archive is cp1252, and it wins
    (legacy / "note.txt").write_bytes("Zažívací trakt, vèer.".encode("cp1252"))
    (tmp_path / "docs" / "fresh.txt").write_text("Plain UTF-8 stays as it is: très.", encoding="utf-8")
    steps = [ParseDocuments(encodings={"*/legacy/*": "cp1252"}), SplitDocuments(), PersistChunks()]
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(steps=steps), registry=registry)
    report = await kb.build([tmp_path / "docs"])
    assert not [i for i in report.issues if i.code == "encoding_guessed"]  # declared, not guessed
    texts = {r.text for r in (await kb.query("trakt", mode="sql_text_search")).results}
    assert texts == {"Zažívací trakt, vèer."}
    assert (await kb.query("très", mode="sql_text_search")).results
    kb.close()
    with pytest.raises(ValueError, match="'no-such-codec'.*not an encoding Python knows"):
        ParseDocuments(encodings={"*": "no-such-codec"})
    with pytest.raises(RecipeError, match="not an encoding Python knows"):
        Recipe.from_toml('[[steps]]\nstep = "parse_documents"\nencodings = { "*" = "klingon" }\n', registry)


async def test_the_unsupported_type_message_offers_images_only_with_something_to_read_them(tmp_path, registry):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "archive.zip").write_bytes(b"PK\x03\x04")
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments(), PersistChunks()]), registry=registry)
    [issue] = (await kb.build([folder])).issues
    assert issue.code == "unsupported_document_type"
    supported = issue.message.split("Supported: ", 1)[1]
    listed, _, images = supported.partition(" (")
    assert ".txt" in listed and ".pdf" in listed and ".png" not in listed  # nothing here reads an image
    assert images == ".jpeg, .jpg, .png, .webp too, with [models.vision] or heta-plugin-ocr)."
