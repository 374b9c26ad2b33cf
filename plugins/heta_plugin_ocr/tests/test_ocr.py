"""Images with text (Pillow renders them) read offline by RapidOCR, in a real knowledge base."""

from __future__ import annotations

import difflib
import io

import heta_plugin_ocr
import pytest
from fpdf import FPDF
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.builtin.steps.parse import parsed_key
from heta_framework.common.models import LanguageModel, VisionModel
from heta_framework.errors import ModelError
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.testing import make_registry
from heta_plugin_ocr import OcrReader, create_reader, reading_order
from PIL import Image, ImageDraw, ImageFont

LIGHTHOUSE = ["Harbour notice", "The lighthouse keeper logs every ship", "that passes the northern breakwater."]
FERRY = ["Ferry timetable", "The first ferry leaves at seven."]


def text_image(lines: list[str], *, size: int = 30, fmt: str = "PNG") -> bytes:
    font = ImageFont.load_default(size=size)  # Pillow's bundled font: the same pixels on every machine
    image = Image.new("RGB", (1000, 60 + int(size * 1.6) * len(lines)), "white")
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((40, 30 + int(size * 1.6) * number), line, fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return buffer.getvalue()


def scanned_pdf() -> bytes:
    """Page 1 has a text layer; page 2 is only an image of text (a scan)."""
    pdf = FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 8, "Port authority bulletin, spring edition.")
    pdf.add_page()
    pdf.image(io.BytesIO(text_image(FERRY)), x=10, y=10, w=180)
    return bytes(pdf.output())


def similarity(read: str, expected: list[str]) -> float:
    return difflib.SequenceMatcher(None, read, "\n".join(expected)).ratio()


@pytest.fixture(scope="module")
def reader() -> OcrReader:
    return OcrReader()


def test_an_image_is_transcribed_line_by_line(reader):
    read = reader.transcribe(text_image(LIGHTHOUSE))
    assert len(read.splitlines()) == 3
    assert similarity(read, LIGHTHOUSE) > 0.95, read
    assert "lighthouse keeper" in read


async def test_jpeg_and_webp_are_read_too(reader):
    for fmt in ("JPEG", "WEBP"):
        completion = await reader.read_image(text_image(FERRY, fmt=fmt), f"image/{fmt.lower()}", "transcribe")
        assert similarity(completion.text, FERRY) > 0.9, (fmt, completion.text)


def test_a_blank_image_reads_as_empty(reader):
    assert reader.transcribe(text_image([])) == ""


def test_boxes_are_put_in_reading_order():
    def box(left, top, text, height=20):
        return ([(left, top), (left + 100, top), (left + 100, top + height), (left, top + height)], text)

    # the detector's order is not the page's: a line's right half may come first, or a lower line
    shuffled = [box(300, 52, "line two, right"), box(10, 10, "line one"), box(10, 50, "line two, left"), box(10, 90, " ")]
    assert reading_order(shuffled) == "line one\nline two, left line two, right"


def test_the_provider_serves_only_its_one_model():
    assert isinstance(create_reader(VisionModel(model_name="ocr/default", options={"threads": 1})), OcrReader)
    for config, message in [
        (VisionModel(model_name="ocr/tesseract"), "one model"),
        (LanguageModel(model_name="ocr/default"), "only reads images"),
        (VisionModel(model_name="ocr/default", options={"lang": "fr"}), "only the option 'threads'"),
        (VisionModel(model_name="ocr/default", options={"threads": 0}), "at least 1"),
    ]:
        with pytest.raises(ModelError, match=message):
            create_reader(config)


async def test_with_no_vision_model_the_ocr_plugin_reads_images_and_scanned_pages(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notice.png").write_bytes(text_image(LIGHTHOUSE))
    (docs / "bulletin.pdf").write_bytes(scanned_pdf())
    (docs / "blank.png").write_bytes(text_image([]))
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(chunk_size=60, chunk_overlap=0), PersistChunks()])  # no models at all
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=make_registry(heta_plugin_ocr))
    report = await kb.build([docs])

    assert [(issue.code, kb.document(issue.subject.id).name) for issue in report.issues] == [("image_text_empty", "blank.png")]
    [keeper] = (await kb.query("lighthouse keeper", mode="sql_text_search", top_k=1)).results
    assert keeper.metadata["name"] == "notice.png" and keeper.metadata["image_reader"] == "ocr/default"
    assert keeper.location == "notice.png"  # an image file is one page: no page number to show

    [ferry] = (await kb.query("ferry timetable", mode="sql_text_search", top_k=1)).results
    # the short text page and the scan fit one chunk, which names both pages
    assert ferry.metadata["name"] == "bulletin.pdf" and ferry.location == "bulletin.pdf pp.1-2"
    parsed = kb.objects.get_json(parsed_key(ferry.document_id))
    [page_one, page_two] = parsed["pages"]
    assert parsed["text"][page_one["start"]:page_one["end"]] == "Port authority bulletin, spring edition."
    assert similarity(parsed["text"][page_two["start"]:page_two["end"]], FERRY) > 0.9

    # built again: the two parsed documents are kept, and the blank image, which had no text to keep,
    # is answered from the cache of OCR answers (keyed by image content): nothing is read twice
    again = await kb.build([docs], rebuild=True)
    parse = next(step for step in again.steps if step.name == "parse_documents")
    assert parse.stats == {"already_parsed": 2, "image_cache_hits": 1}


async def test_with_the_ocr_plugin_image_files_are_among_the_supported_types(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "archive.zip").write_bytes(b"PK\x03\x04")
    recipe = Recipe(steps=[ParseDocuments(), SplitDocuments(), PersistChunks()])
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=make_registry(heta_plugin_ocr))
    [issue] = (await kb.build([docs])).issues
    listed = issue.message.split("Supported: ", 1)[1]
    assert ".png" in listed and ".webp" in listed and "too, with" not in listed
