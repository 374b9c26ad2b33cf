"""Images and scanned PDF pages read by a vision model: the real openai client against the scripted server."""

from __future__ import annotations

import base64
import io

import heta_plugin_openai
from fpdf import FPDF
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import LanguageModel, VisionModel
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.kb.recipe import KnowledgeModels
from heta_framework.testing import make_registry
from heta_framework.testing.http import Reply, chat_completion_body, openai_error_body
from PIL import Image, ImageDraw

API_KEY = "sk-test-SECRET-vision-77"
FAST = {"retry_initial_delay": 0.01, "retry_max_delay": 0.05, "timeout": 5}


def png_with_text(text: str) -> bytes:
    image = Image.new("RGB", (480, 120), "white")
    ImageDraw.Draw(image).text((10, 50), text, fill="black")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def image_parts(request) -> list[dict]:
    [message] = request.json["messages"]
    return [part for part in message["content"] if part["type"] == "image_url"]


def kb_with(tmp_path, models: KnowledgeModels, chunk_size: int = 200) -> KnowledgeBase:
    recipe = Recipe(models=models, steps=[ParseDocuments(), SplitDocuments(chunk_size=chunk_size, chunk_overlap=0), PersistChunks()])
    return KnowledgeBase.create(tmp_path / "kb", recipe, registry=make_registry(heta_plugin_openai))


def vision(server, **options) -> VisionModel:
    return VisionModel(model_name="openai/vision-test", base_url=server.base_url, api_key=API_KEY, options={**FAST, **options})


async def test_an_image_is_sent_as_a_data_url_and_its_answer_is_indexed_with_its_page(tmp_path, scripted_server):
    docs = tmp_path / "docs"
    docs.mkdir()
    image = png_with_text("Boiler pressure 4.2 bar")
    (docs / "gauge.png").write_bytes(image)
    scripted_server.enqueue("chat/completions", body=chat_completion_body("Boiler pressure 4.2 bar, checked weekly."))
    kb = kb_with(tmp_path, KnowledgeModels(vision=vision(scripted_server)))
    report = await kb.build([docs])

    assert not report.issues
    [request] = scripted_server.requests_to("chat/completions")
    assert request.json["model"] == "vision-test"
    [part] = image_parts(request)
    prefix = "data:image/png;base64,"
    assert part["image_url"]["url"].startswith(prefix)
    assert base64.b64decode(part["image_url"]["url"][len(prefix):]) == image  # the file itself, unchanged
    [hit] = (await kb.query("boiler pressure", mode="sql_text_search", top_k=1)).results
    assert hit.text == "Boiler pressure 4.2 bar, checked weekly."
    assert hit.metadata["name"] == "gauge.png" and hit.metadata["page"] == 1
    assert hit.metadata["image_reader"] == "openai/vision-test"
    assert API_KEY not in str(kb.documents) and API_KEY not in repr(report)

    # a rebuild asks the model nothing: the answer is cached by the image's content hash
    await kb.build([docs], rebuild=True)
    assert len(scripted_server.requests_to("chat/completions")) == 1
    assert (await kb.query("boiler pressure", mode="sql_text_search", top_k=1)).results[0].text == hit.text


async def test_a_scanned_pdf_page_is_read_and_the_typed_page_is_kept(tmp_path, scripted_server):
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.multi_cell(0, 10, "Typed page about the harbour crane.")
    pdf.add_page()
    pdf.image(io.BytesIO(png_with_text("Crane load limit 12 tonnes")), x=10, y=10, w=180)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "crane.pdf").write_bytes(bytes(pdf.output()))
    scripted_server.enqueue("chat/completions", body=chat_completion_body("Crane load limit 12 tonnes"))
    # no models.vision: the language model says it accepts images
    language = LanguageModel(model_name="openai/omni", base_url=scripted_server.base_url, api_key=API_KEY, options={**FAST, "accepts_images": True})
    kb = kb_with(tmp_path, KnowledgeModels(language=language), chunk_size=8)  # a chunk per page
    report = await kb.build([docs])

    assert not report.issues
    [request] = scripted_server.requests_to("chat/completions")
    assert image_parts(request)[0]["image_url"]["url"].startswith("data:image/")
    [scan] = (await kb.query("load limit tonnes", mode="sql_text_search", top_k=1)).results
    assert scan.metadata["page"] == 2 and "12 tonnes" in scan.text
    [typed] = (await kb.query("harbour crane", mode="sql_text_search", top_k=1)).results
    assert typed.metadata["page"] == 1


async def test_rate_limits_time_outs_and_empty_answers_become_issues(tmp_path, scripted_server):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "limited.png").write_bytes(png_with_text("rate limited"))
    (docs / "slow.png").write_bytes(png_with_text("too slow"))
    (docs / "blank.png").write_bytes(png_with_text(""))
    (docs / "fake.png").write_bytes(b"not an image at all")

    def answer(request):
        url = image_parts(request)[0]["image_url"]["url"]
        data = base64.b64decode(url.split(",", 1)[1])
        if data == (docs / "limited.png").read_bytes():
            return Reply(status=429, body=openai_error_body("quota exceeded"), headers={"Retry-After": "0"})
        if data == (docs / "slow.png").read_bytes():
            return Reply(body=chat_completion_body("late"), delay=1.0)
        return chat_completion_body("   ")

    scripted_server.respond("chat/completions", answer)
    kb = kb_with(tmp_path, KnowledgeModels(vision=vision(scripted_server, timeout=0.3, max_attempts=2)))
    report = await kb.build([docs])

    codes = sorted((issue.code, kb.document(issue.subject.id).name) for issue in report.issues)
    assert codes == [
        ("corrupt_document", "fake.png"),
        ("image_read_failed", "limited.png"),
        ("image_read_failed", "slow.png"),
        ("image_text_empty", "blank.png"),
    ]
    [limited] = [i for i in report.issues if kb.document(i.subject.id).name == "limited.png"]
    assert "429" in limited.message and API_KEY not in limited.message
    # each failing image was tried max_attempts times; the failed ones are retried by the next build
    assert len(scripted_server.requests_to("chat/completions")) == 2 + 2 + 1
    scripted_server.respond("chat/completions", lambda request: chat_completion_body("now readable"))
    await kb.build([docs])
    assert len((await kb.query("readable", mode="sql_text_search", top_k=5)).results) == 2


async def test_without_a_vision_model_an_image_is_an_issue_never_silently_empty(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + b"\x00" * 64)
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments(), PersistChunks()]), registry=make_registry())
    report = await kb.build([docs])
    [issue] = report.issues
    assert issue.code == "needs_vision_model" and issue.resolution.action == "skipped_document"
    assert "[models.vision]" in issue.resolution.outcome
