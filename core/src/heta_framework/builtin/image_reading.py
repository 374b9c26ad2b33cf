"""Reading page images (image files, scanned PDF pages) into text during ParseDocuments.

Who reads, in order: the recipe's ``models.vision``; else its ``models.language`` when that
client says it accepts images (``accepts_images``, e.g. the openai provider's option); else an
installed OCR plugin (a ``vision`` model provider named ``ocr``, heta-plugin-ocr). With none,
the document gets a ``needs_vision_model`` issue: an image is never silently empty.

Answers are cached in the object store by model, instruction version and the image's
content hash, so a rebuild (or a resumed build) asks the model nothing it already answered.
Pages of one document are read concurrently, at most ``concurrency`` at once.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import attrs

from heta_framework.common.models import VisionModel
from heta_framework.contracts.documents import PageImage, ParseResult, content_hash, join_pages

log = logging.getLogger(__name__)

IMAGE_TEXT_PREFIX = "image_text/"
#: bump when INSTRUCTION changes, so cached answers to the old instruction are not reused
INSTRUCTION_VERSION = "1"
INSTRUCTION = (
    "Transcribe all text in this image exactly, in reading order, as plain text. Write a table as one line "
    "per row, 'Header: value | Header: value'. If the image holds no text, describe what it shows in two or "
    "three sentences. Answer with the text only, no preamble."
)
OCR_MODEL_NAME = "ocr/default"


def image_text_key(model_name: str, image: bytes) -> str:
    return f"{IMAGE_TEXT_PREFIX}{content_hash(chr(31).join((model_name, INSTRUCTION_VERSION, content_hash(image))))}.json"


def find_image_reader(context: Any) -> Any | None:
    """The client that reads images for this build, or ``None`` (see the module docstring for the order)."""
    if context.has_component("models.vision"):
        return context.vision_model()
    if context.has_component("models.language"):
        language = context.language_model()
        if getattr(language, "accepts_images", False) and hasattr(language, "read_image"):
            return language
    registry = getattr(context.knowledge_base, "registry", None)
    if registry is not None and "vision:ocr" in registry.items["model_providers"]:
        return registry.model_provider("ocr", "vision").create(VisionModel(model_name=OCR_MODEL_NAME))
    return None


@attrs.frozen
class PageReading:
    page: int
    text: str | None  # None: the read failed
    error: str = ""
    cached: bool = False


async def read_images(reader: Any, objects: Any, images: tuple[PageImage, ...], concurrency: int) -> list[PageReading]:
    """Each image's text, from the cache or the reader; a failed read is a ``PageReading`` with ``text=None``."""
    gate = asyncio.Semaphore(concurrency)

    async def read(image: PageImage) -> PageReading:
        key = image_text_key(reader.model_name, image.data)
        if objects.exists(key):
            return PageReading(image.page, objects.get_json(key)["text"], cached=True)
        async with gate:
            try:
                completion = await reader.read_image(image.data, image.media_type, INSTRUCTION)
            except Exception as exc:  # a lost or refusing model loses this page, not the build
                log.warning("reading page %s with %s failed: %s", image.page, reader.model_name, type(exc).__name__)
                return PageReading(image.page, None, error=str(exc) or type(exc).__name__)
        text = completion.text.strip()
        objects.put_json(key, {"model": reader.model_name, "text": text})
        return PageReading(image.page, text)

    return list(await asyncio.gather(*(read(image) for image in images)))


def merge_page_texts(result: ParseResult, page_texts: dict[int, str]) -> ParseResult:
    """``result`` with each page's read image text added to that page's own text, page spans renumbered."""
    own = {span.page: result.text[span.start:span.end] for span in result.pages} if result.pages else {1: result.text}
    text, spans = join_pages(
        (number, "\n\n".join(part for part in (own.get(number, "").strip(), page_texts.get(number, "")) if part))
        for number in sorted(set(own) | set(page_texts))
    )
    return attrs.evolve(result, text=text, pages=spans, images=())
