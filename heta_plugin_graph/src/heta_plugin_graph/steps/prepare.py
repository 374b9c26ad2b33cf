"""Optional preparation for extraction and provenance: ``MergeChunks`` and ``RechunkDocuments``.

Neither builds a search index. ``MergeChunks`` joins neighbouring chunks into
larger extraction units (fewer LLM calls, more context) while remembering the
member chunks, so evidence still points at the chunks other modes return.
``RechunkDocuments`` splits parsed documents again at a size chosen for
extraction; evidence then points at these graph chunks, whose text the graph
store keeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from heta_framework.builtin.steps.split import check_chunk_overlap, split_parsed
from heta_framework.builtin.text_split import count_tokens
from heta_framework.kb.documents import Chunk, chunk_to_dict, document_key, iter_chunks, parsed_from_dict
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, store_ref

from heta_plugin_graph.steps.common import GRAPH_CHUNK_KEYS, check_positive, extraction_chunk_keys

UNITS_PREFIX = "graph/units/"
RECHUNK_PREFIX = "graph/chunks/"


def _delete_prefixed(context: Any, prefix: str, document_ids: list[str]) -> None:
    objects = context.store("objects")
    for document_id in document_ids:
        objects.delete(f"{prefix}{document_key(document_id)}.json")


def merge_neighbours(chunks: list[Chunk], max_tokens: int) -> list[Chunk]:
    """Join consecutive chunks of one document up to ``max_tokens``; overlapping text appears once."""
    units: list[Chunk] = []
    group: list[Chunk] = []

    def close() -> None:
        if not group:
            return
        text = group[0].text
        spans = [[group[0].id, 0, len(text)]]
        for previous, chunk in zip(group, group[1:]):
            # SplitDocuments repeats the end of the previous chunk; keep that text once
            overlap = min(max(0, previous.end - chunk.start), len(chunk.text))
            before = len(text)
            if overlap:
                text += chunk.text[overlap:]
                start = max(0, before - overlap)
            else:
                text += "\n" + chunk.text
                start = before + 1
            spans.append([chunk.id, start, len(text)])
        first = group[0]
        unit_id = first.id if len(group) == 1 else f"{first.id}+{len(group) - 1}"
        units.append(
            Chunk(
                id=unit_id, document_id=first.document_id, text=text, index=len(units), start=first.start,
                end=group[-1].end, source=first.source, page=first.page,
                metadata={**dict(first.metadata), "member_spans": spans},
            )
        )
        group.clear()

    tokens = 0
    for chunk in chunks:
        size = count_tokens(chunk.text)
        if group and tokens + size > max_tokens:
            close()
            tokens = 0
        group.append(chunk)
        tokens += size
    close()
    return units


@attrs.frozen
class MergeChunks:
    """Join neighbouring chunks into extraction units of at most ``max_tokens`` tokens."""

    name: ClassVar[str] = "merge_chunks"

    max_tokens: int = attrs.field(default=600, validator=check_positive)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=frozenset({store_ref("objects")}), artifacts=frozenset({"chunk_keys"}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({GRAPH_CHUNK_KEYS}))

    async def run(self, context: StepContextProtocol) -> None:
        objects = context.store("objects")
        keys = []
        for key in extraction_chunk_keys(context):
            chunks = list(iter_chunks(objects, [key]))
            if not chunks:
                continue
            units = merge_neighbours(chunks, self.max_tokens)
            unit_key = f"{UNITS_PREFIX}{document_key(chunks[0].document_id)}.json"
            objects.put_json(unit_key, [chunk_to_dict(u) for u in units])
            keys.append(unit_key)
            context.count("chunks_in", len(chunks))
            context.count("units_out", len(units))
        context.set_artifact(GRAPH_CHUNK_KEYS, keys)

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/graph/units",), description="merged extraction units")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        _delete_prefixed(context, UNITS_PREFIX, document_ids)


@attrs.frozen
class RechunkDocuments:
    """Split parsed documents again into ``chunk_size``-token chunks for extraction (ids ``<document>-g00000``)."""

    name: ClassVar[str] = "rechunk_documents"

    chunk_size: int = attrs.field(default=400, validator=check_positive)
    chunk_overlap: int = attrs.field(default=40, validator=check_chunk_overlap)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=frozenset({store_ref("objects")}), artifacts=frozenset({"parsed_document_keys"}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({GRAPH_CHUNK_KEYS}))

    async def run(self, context: StepContextProtocol) -> None:
        objects = context.store("objects")
        keys = []
        for parsed_key in context.get_artifact("parsed_document_keys"):
            parsed = parsed_from_dict(objects.get_json(parsed_key))
            chunks = split_parsed(
                parsed, self.chunk_size, self.chunk_overlap, id_tag="g", metadata={**dict(parsed.metadata), "graph_chunk": True}
            )
            key = f"{RECHUNK_PREFIX}{document_key(parsed.document_id)}.json"
            objects.put_json(key, [chunk_to_dict(c) for c in chunks])
            keys.append(key)
            context.count("graph_chunks", len(chunks))
        context.set_artifact(GRAPH_CHUNK_KEYS, keys)

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/graph/chunks",), description="graph extraction chunks")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        _delete_prefixed(context, RECHUNK_PREFIX, document_ids)
