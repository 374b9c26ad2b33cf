"""``ParseDocuments``: raw files -> text with page spans, one ``StepIssue`` per bad document."""

from __future__ import annotations

import asyncio
import codecs
import fnmatch
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from heta_framework.builtin.image_files import IMAGE_PARSER
from heta_framework.builtin.image_reading import find_image_reader, merge_page_texts, read_images
from heta_framework.builtin.parsers import BinaryDocumentError, ParserDependencyError
from heta_framework.common.validators import number, positive_whole_number
from heta_framework.contracts.components import parser_ref, store_ref
from heta_framework.contracts.documents import DocumentParseError, document_key
from heta_framework.contracts.steps import (
    StepCapabilities,
    StepCleanupPlan,
    StepContextProtocol,
    StepRequirements,
)
from heta_framework.plugins.known import file_type_hint

PARSED_PREFIX = "parsed/"


class _ImageReaderSlot:
    """The build's image reader, looked up the first time a document has page images."""

    def __init__(self) -> None:
        self._looked, self._reader = False, None

    def get(self, context: Any) -> Any:
        if not self._looked:
            self._looked, self._reader = True, find_image_reader(context)
        return self._reader


def parsed_key(document_id: str) -> str:
    # document_key, not the id itself: ids may hold "/", "..", or be longer than a file name
    return f"{PARSED_PREFIX}{document_key(document_id)}.json"


#: the parsers that read bytes as text, so a declared encoding applies to them (never to a PDF or Word file)
DECLARABLE_PARSERS = frozenset({"text", "html"})


def _known_encodings(instance: Any, attribute: attrs.Attribute[Any], value: Mapping[str, str]) -> None:
    for pattern, encoding in dict(value).items():
        try:
            codecs.lookup(encoding)
        except (LookupError, TypeError):
            raise ValueError(f"{attribute.name}: {encoding!r} (for {pattern!r}) is not an encoding Python knows") from None


def _as_utf8(data: bytes, encoding: str) -> bytes:
    """``data`` as UTF-8: unchanged when it already is, else decoded with the declared ``encoding``."""
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        return data.decode(encoding, errors="replace").encode("utf-8")


@attrs.frozen
class ParseDocuments:
    """Parse every document of the run with the parser registered for its extension.

    Empty, binary, corrupt, unsupported or oversized documents become issues
    (``empty_document``, ``binary_document``, ``corrupt_document``,
    ``unsupported_document_type``, ``document_too_large``); the build goes on.
    Image files and PDF pages with no text layer are read by the recipe's vision model
    (or an OCR plugin), at most ``image_concurrency`` pages at once, answers cached by image
    content; without one they are a ``needs_vision_model`` issue (``image_read_failed``,
    ``image_text_empty`` when the model fails or finds nothing).
    Text that is not valid UTF-8 is kept and flagged (``invalid_utf8``: invalid bytes replaced
    with U+FFFD; ``encoding_guessed``: read in a guessed legacy encoding).
    A document already parsed with the same content is not parsed again.
    """

    name: ClassVar[str] = "parse_documents"

    max_document_mb: float = attrs.field(default=100.0, validator=number(above=0))
    #: page images of one document read at once by the vision model or OCR
    image_concurrency: int = attrs.field(default=4, validator=positive_whole_number)
    #: the legacy encoding of text files whose source matches a glob (``{"archive/**" = "cp1252"}``): read with it,
    #: not a guess, when they are not UTF-8 (plain text, Markdown, HTML; the first matching glob wins)
    encodings: Mapping[str, str] = attrs.field(factory=dict, validator=_known_encodings)

    def _declared_encoding(self, source: str) -> str | None:
        return next((encoding for pattern, encoding in self.encodings.items() if fnmatch.fnmatch(source, pattern)), None)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(
            components=frozenset({parser_ref(), store_ref("objects")}),
            artifacts=frozenset({"document_ids"}),
        )

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({"parsed_document_keys"}))

    async def run(self, context: StepContextProtocol) -> None:
        parsers = context.parsers()
        objects = context.store("objects")
        keys: list[str] = []
        document_ids = context.get_artifact("document_ids")
        progress = context.progress("parse documents", len(document_ids))
        images = _ImageReaderSlot()
        for document_id in document_ids:
            record = context.document(document_id)
            key = parsed_key(document_id)
            progress.advance()
            stored = objects.get_json(key) if objects.exists(key) else None
            # a document with page images left unread (the vision model failed) is parsed again
            if stored is not None and stored.get("content_hash") == record.content_hash and not stored.get("unread_pages"):
                keys.append(key)
                context.count("already_parsed")
                continue
            subject = ("document", document_id)
            where = f"{record.name} ({record.source})"
            if record.size > self.max_document_mb * 1024 * 1024:
                context.report(
                    "document_too_large",
                    f"{where} is {record.size / 1048576:.1f} MB, over max_document_mb={self.max_document_mb}.",
                    subject=subject, action="skipped_document",
                    outcome="Not indexed. Raise max_document_mb in the recipe to include it.",
                )
                continue
            parser = parsers.for_name(record.name)
            if parser is None:
                context.report(
                    "unsupported_document_type", f"No parser handles {where}.{file_type_hint(record.name)} {self._supported(parsers, context, images)}",
                    subject=subject, action="skipped_document", outcome="Not indexed.",
                )
                continue
            data = objects.get_bytes(record.raw_key)
            if parser.name in DECLARABLE_PARSERS and (encoding := self._declared_encoding(record.source)) is not None:
                data = _as_utf8(data, encoding)
            try:
                result = await asyncio.to_thread(parser.parse, data, record.name)
            except BinaryDocumentError as exc:
                context.report("binary_document", f"{where}: {exc}.", subject=subject, action="skipped_document", outcome="Not indexed.")
                continue
            except ParserDependencyError as exc:
                context.report(
                    "parser_dependency_missing", f"{where}: {exc}.", subject=subject, action="skipped_document",
                    outcome="Not indexed until the extra is installed.",
                )
                continue
            except Exception as exc:  # DocumentParseError (its own code, corrupt_document by default), or a parser bug: neither may stop the build
                known = exc if isinstance(exc, DocumentParseError) else DocumentParseError()
                if known.retry:  # a passing cause (a service that timed out): the next plain build tries again
                    context.retry_document(document_id)
                context.report(
                    known.code, f"{where} could not be parsed by {parser.name!r}: {exc}",
                    subject=subject, action="retry_document" if known.retry else "skipped_document", outcome=known.outcome,
                    details={"error_type": type(exc).__name__},
                )
                continue
            for code, message in result.warnings:
                context.report(code, f"{where}: {message}.", subject=subject, action="kept_document", outcome="Indexed with the text as decoded.")
            unread: list[int] = []
            if result.images:
                result, unread = await self._read_images(context, images, result, where, subject)
                if not result.text.strip():
                    continue  # the image issues above say why there is nothing to index
            if not result.text.strip():
                context.report(
                    "empty_document", f"{where} has no text" + (" (a scanned PDF needs OCR first)" if parser.name == "pdf" else "") + ".",
                    subject=subject, action="skipped_document", outcome="Nothing to index.",
                )
                continue
            objects.put_json(
                key,
                {
                    "document_id": document_id,
                    "source": record.source,
                    "content_hash": record.content_hash,
                    "text": result.text,
                    "pages": [attrs.asdict(p) for p in result.pages],
                    "metadata": {"name": record.name, **dict(result.metadata), **dict(record.metadata)},
                    "unread_pages": unread,
                },
            )
            keys.append(key)
            context.count("documents_parsed")
        progress.close()
        context.set_artifact("parsed_document_keys", keys)

    @staticmethod
    def _supported(parsers: Any, context: Any, images: _ImageReaderSlot) -> str:
        """The extensions this build can read; image files only when something can read them (a vision model or
        OCR), since without one they are parsed into nothing."""
        images_only = set(parsers.extensions_of(IMAGE_PARSER.name)) if hasattr(parsers, "extensions_of") else set()
        if not images_only or images.get(context) is not None:
            return f"Supported: {', '.join(parsers.extensions)}."
        readable = [extension for extension in parsers.extensions if extension not in images_only]
        return (f"Supported: {', '.join(readable)} ({', '.join(sorted(images_only))} too, with [models.vision] "
                "or heta-plugin-ocr).")

    async def _read_images(self, context: Any, images: _ImageReaderSlot, result: Any, where: str, subject: tuple[str, str]) -> tuple[Any, list[int]]:
        """``result`` with its page images read into text, and the pages left unread; every problem an issue."""
        pages = [image.page for image in result.images]
        reader = images.get(context)
        if reader is None:
            context.report(
                "needs_vision_model",
                f"{where}: page(s) {', '.join(map(str, pages))} are images with no text layer, and the recipe has no vision model.",
                subject=subject, action="kept_document" if result.text.strip() else "skipped_document",
                outcome="Those pages are not indexed. Add [models.vision] (an image-capable model, e.g. openai/gpt-4o-mini), "
                "or install heta-plugin-ocr, then build again with --rebuild.",
                details={"pages": ",".join(map(str, pages))},
            )
            return attrs.evolve(result, images=()), []
        readings = await read_images(reader, context.store("objects"), result.images, self.image_concurrency)
        texts: dict[int, str] = {}
        unread: list[int] = []
        for reading in readings:
            context.count("image_cache_hits" if reading.cached else "image_reads")
            if reading.text is None:
                unread.append(reading.page)
                context.report(
                    "image_read_failed", f"{where}: {reader.model_name} could not read page {reading.page}: {reading.error}",
                    subject=subject, action="retry_document", outcome="The page is not indexed; the next build tries it again.",
                    details={"page": reading.page},
                )
            elif not reading.text:
                context.report(
                    "image_text_empty", f"{where}: {reader.model_name} found no text in page {reading.page}.",
                    subject=subject, action="kept_document", outcome="The page is not indexed.", details={"page": reading.page},
                )
            else:
                texts[reading.page] = reading.text
        if unread:
            context.retry_document(subject[1])
        merged = merge_page_texts(result, texts)
        return attrs.evolve(merged, metadata={**merged.metadata, "image_reader": reader.model_name}), unread

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/parsed",), description="parsed document text")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        objects = context.store("objects")
        for document_id in document_ids:
            objects.delete(parsed_key(document_id))
