"""``SplitDocuments``: parsed text -> token-sized, sentence-respecting chunks with provenance."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from heta_framework.builtin.text_split import split_text
from heta_framework.common.validators import positive_whole_number
from heta_framework.contracts.components import store_ref
from heta_framework.contracts.documents import Chunk, chunk_to_dict, chunks_key, parsed_from_dict
from heta_framework.contracts.provenance import table_provenance
from heta_framework.contracts.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements


def check_chunk_overlap(instance: Any, attribute: attrs.Attribute, value: int) -> None:
    """An attrs validator for ``chunk_overlap`` beside a ``chunk_size`` field declared before it."""
    if not 0 <= value < instance.chunk_size:
        raise ValueError(f"chunk_overlap must be >= 0 and smaller than chunk_size ({instance.chunk_size}), got {value}")


def _chunk_spans(parsed: Any, chunk_size: int, chunk_overlap: int) -> list[tuple[int, int]]:
    """Where the chunks of a parsed document start and end. A deck or a book (``page_unit = "slide"`` or
    ``"section"``) is split slide by slide, section by section: that is what its readers cite ("slide 4"),
    and one chunk over three short slides would only say "slides 2-4"."""
    if not parsed.metadata.get("page_unit") or not parsed.pages:
        return list(split_text(parsed.text, chunk_size, chunk_overlap))
    return [
        (page.start + start, page.start + end)
        for page in parsed.pages
        for start, end in split_text(parsed.text[page.start:page.end], chunk_size, chunk_overlap)
    ]


def split_parsed(parsed: Any, chunk_size: int, chunk_overlap: int, *, id_tag: str = "", metadata: Any = None) -> list[Chunk]:
    """Chunks of a parsed document with provenance (page; sheet or table and rows for table rows,
    ``kb/provenance.py``); ids are ``<document>-<id_tag><index:05d>``."""
    shared = parsed.metadata if metadata is None else metadata
    chunks = []
    for index, (start, end) in enumerate(_chunk_spans(parsed, chunk_size, chunk_overlap)):
        text = parsed.text[start:end]
        extra = table_provenance(text, parsed.metadata)
        page, last_page = parsed.page_at(start), parsed.page_at(end - 1)
        if page is not None and last_page not in (None, page):  # a chunk across a page break names both ends
            extra["page_end"] = last_page
        chunks.append(Chunk(
            id=f"{parsed.document_id}-{id_tag}{index:05d}",
            document_id=parsed.document_id,
            text=text,
            index=index,
            start=start,
            end=end,
            source=parsed.source,
            page=page,
            metadata={**shared, **extra} if extra else shared,
        ))
    return chunks


@attrs.frozen
class SplitDocuments:
    """Split each parsed document into chunks of about ``chunk_size`` tokens.

    A token is a word or one CJK character (no tokenizer download). Chunks end
    at sentence boundaries where possible and repeat up to ``chunk_overlap``
    tokens of the previous chunk. Each chunk keeps its document id, source,
    character offsets and page.
    """

    name: ClassVar[str] = "split_documents"

    chunk_size: int = attrs.field(default=200, validator=positive_whole_number)
    chunk_overlap: int = attrs.field(default=30, validator=check_chunk_overlap)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=frozenset({store_ref("objects")}), artifacts=frozenset({"parsed_document_keys"}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({"chunk_keys"}))

    def split(self, parsed: Any) -> list[Chunk]:
        return split_parsed(parsed, self.chunk_size, self.chunk_overlap)

    async def run(self, context: StepContextProtocol) -> None:
        objects = context.store("objects")
        keys: list[str] = []
        parsed_keys = context.get_artifact("parsed_document_keys")
        progress = context.progress("split documents", len(parsed_keys))
        for parsed_key in parsed_keys:
            parsed = parsed_from_dict(objects.get_json(parsed_key))
            chunks = self.split(parsed)
            key = chunks_key(parsed.document_id)
            objects.put_json(key, [chunk_to_dict(c) for c in chunks])
            keys.append(key)
            context.count("chunks", len(chunks))
            progress.advance()
        progress.close()
        context.set_artifact("chunk_keys", keys)

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/chunks",), description="document chunks")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        objects = context.store("objects")
        for document_id in document_ids:
            objects.delete(chunks_key(document_id))

    async def preview_removal(self, context: StepContextProtocol, document_ids: list[str]) -> dict[str, int]:
        """The chunks ``delete_documents`` would remove."""
        objects = context.store("objects")
        return {"chunks": sum(len(objects.get_json(key)) for d in document_ids if objects.exists(key := chunks_key(d)))}
