"""``ParseDocuments``: raw files -> text with page spans, one ``StepIssue`` per bad document."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from heta_framework.builtin.parsers import BinaryDocumentError, ParserDependencyError
from heta_framework.common.validators import number
from heta_framework.kb.documents import document_key
from heta_framework.kb.steps import (
    StepCapabilities,
    StepCleanupPlan,
    StepRequirements,
    parser_ref,
    store_ref,
)

PARSED_PREFIX = "parsed/"


def parsed_key(document_id: str) -> str:
    # document_key, not the id itself: ids may hold "/", "..", or be longer than a file name
    return f"{PARSED_PREFIX}{document_key(document_id)}.json"


@attrs.frozen
class ParseDocuments:
    """Parse every document of the run with the parser registered for its extension.

    Empty, binary, corrupt, unsupported or oversized documents become issues
    (``empty_document``, ``binary_document``, ``corrupt_document``,
    ``unsupported_document_type``, ``document_too_large``); the build goes on.
    Text that is not valid UTF-8 is kept and flagged (``invalid_utf8``: invalid bytes replaced
    with U+FFFD; ``encoding_guessed``: read in a guessed legacy encoding).
    A document already parsed with the same content is not parsed again.
    """

    name: ClassVar[str] = "parse_documents"

    max_document_mb: float = attrs.field(default=100.0, validator=number(above=0))

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(
            components=frozenset({parser_ref(), store_ref("objects")}),
            artifacts=frozenset({"document_ids"}),
        )

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({"parsed_document_keys"}))

    async def run(self, context: Any) -> None:
        parsers = context.get_component("parsers.documents")
        objects = context.get_component("stores.objects")
        keys: list[str] = []
        document_ids = context.get_artifact("document_ids")
        progress = context.progress("parse documents", len(document_ids))
        for document_id in document_ids:
            record = context.document(document_id)
            key = parsed_key(document_id)
            progress.advance()
            if objects.exists(key) and objects.get_json(key).get("content_hash") == record.content_hash:
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
                    "unsupported_document_type",
                    f"No parser handles {where}. Supported: {', '.join(parsers.extensions)}.",
                    subject=subject, action="skipped_document", outcome="Not indexed.",
                )
                continue
            data = objects.get_bytes(record.raw_key)
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
            except Exception as exc:  # DocumentParseError, or a parser bug: neither may stop the build
                context.report(
                    "corrupt_document", f"{where} could not be parsed by {parser.name!r}: {exc}",
                    subject=subject, action="skipped_document", outcome="Not indexed.",
                    details={"error_type": type(exc).__name__},
                )
                continue
            for code, message in result.warnings:
                context.report(code, f"{where}: {message}.", subject=subject, action="kept_document", outcome="Indexed with the text as decoded.")
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
                },
            )
            keys.append(key)
            context.count("documents_parsed")
        progress.close()
        context.set_artifact("parsed_document_keys", keys)

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/parsed",), description="parsed document text")

    async def delete_documents(self, context: Any, document_ids: list[str]) -> None:
        objects = context.get_component("stores.objects")
        for document_id in document_ids:
            objects.delete(parsed_key(document_id))
