"""The ``image`` parser: PNG, JPEG and WebP files become one page for a vision model or OCR to read.

The parser only checks that the bytes are the image format they claim (by their magic
bytes, so core needs no imaging library) and hands the image on in ``ParseResult.images``;
ParseDocuments has the recipe's vision model (or an installed OCR plugin) read it, and
reports ``needs_vision_model`` when there is neither.
"""

from __future__ import annotations

from heta_framework.contracts.documents import DocumentParseError, DocumentParser, PageImage, ParseResult


def image_media_type(data: bytes) -> str | None:
    """``image/png``, ``image/jpeg`` or ``image/webp`` from the file's first bytes; ``None`` for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def parse_image(data: bytes, name: str) -> ParseResult:
    media_type = image_media_type(data)
    if media_type is None:
        raise DocumentParseError("the bytes are not a PNG, JPEG or WebP image (check the file, or its extension)")
    return ParseResult(text="", images=(PageImage(page=1, data=data, media_type=media_type),), metadata={"media_type": media_type})


IMAGE_PARSER = DocumentParser(
    "image", (".png", ".jpg", ".jpeg", ".webp"), parse_image,
    "PNG/JPEG/WebP images, read by the recipe's vision model (models.vision) or an OCR plugin",
)
