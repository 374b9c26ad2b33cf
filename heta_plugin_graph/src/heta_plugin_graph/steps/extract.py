"""``ExtractEntities`` and ``ExtractRelations``: chunks -> per-document extraction files.

``extractor="llm"`` asks the language model (``model`` names a recipe model,
default the default one): one JSON-schema-constrained call per chunk for
entities, and one per chunk with at least two entities for relations. Invalid
output is retried with the validation error (``max_attempts`` tries), then
becomes an ``invalid_llm_output`` issue; an unreachable model becomes
``llm_call_failed`` and leaves the chunk's document pending, so the next plain
build retries it; either way the build goes on. Answers are cached in
the knowledge base's ``graph_llm`` cache, so a resumed or repeated build makes no repeated call.

``extractor="nlp"`` needs no language model: noun phrases and sentence co-occurrence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from heta_framework.common.threads import in_thread
from heta_framework.common.validators import number
from heta_framework.kb.documents import Chunk, iter_chunks
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, store_ref

from heta_plugin_graph.draft import DOCUMENTS_PER_FILE, EXTRACT_PREFIX, extraction_key, forget_documents
from heta_plugin_graph.extraction import llm as llm_extraction
from heta_plugin_graph.extraction import nlp as nlp_extraction
from heta_plugin_graph.llm.asking import CallSettings, JsonRequest, ask_json
from heta_plugin_graph.llm.calls import LlmOutcome
from heta_plugin_graph.normalize import normalize_name
from heta_plugin_graph.steps.common import (
    EXTRACTION_KEYS,
    RELATIONS_EXTRACTED,
    call_settings,
    check_extractor,
    check_positive,
    extraction_chunk_keys,
    language_ref,
    llm_cache,
    report_llm_failure,
)


def evidence_chunk_ids(unit: Chunk, name: str) -> list[str]:
    """The member chunks of a merged unit that mention ``name``; all members when none does."""
    spans = unit.metadata.get("member_spans")
    if not spans:
        return [unit.id]
    key = normalize_name(name)
    mentioned = [chunk_id for chunk_id, start, end in spans if key in normalize_name(unit.text[start:end])]
    return mentioned or [chunk_id for chunk_id, _, _ in spans]


def retry_if_unreachable(context: Any, outcome: Any, unit: Chunk) -> None:
    """An unreachable model (not a bad answer, which is cached) leaves the unit's document pending, so the
    next plain build retries it; the answers cached for its other chunks mean only the failed calls are made again."""
    if outcome.status == "call_failed":
        context.retry_document(unit.document_id)


def _load_units(context: Any) -> list[Chunk]:
    objects = context.store("objects")
    return list(iter_chunks(objects, extraction_chunk_keys(context)))


def _by_document(units: list[Chunk]) -> dict[str, list[Chunk]]:
    grouped: dict[str, list[Chunk]] = {}
    for unit in units:
        grouped.setdefault(unit.document_id, []).append(unit)
    return grouped


@attrs.frozen
class ExtractEntities:
    """Find the entities of every chunk: ``{name, type, description, attributes}``."""

    name: ClassVar[str] = "extract_entities"

    extractor: str = attrs.field(default="llm", validator=check_extractor)
    model: str | None = None
    concurrency: int = attrs.field(default=8, validator=check_positive)
    max_attempts: int = attrs.field(default=3, validator=check_positive)
    timeout: float = attrs.field(default=300.0, validator=number(above=0))
    max_entities_per_chunk: int = attrs.field(default=12, validator=check_positive)

    @property
    def requirements(self) -> StepRequirements:
        components = {store_ref("objects")}
        if self.extractor == "llm":
            components.add(language_ref(self.model))
        return StepRequirements(components=frozenset(components), artifacts=frozenset({"chunk_keys"}))

    def _settings(self) -> CallSettings:
        return call_settings(self.model, llm_extraction.PROMPT_VERSION, self.concurrency, self.max_attempts, self.timeout)

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({EXTRACTION_KEYS}))

    async def run(self, context: StepContextProtocol) -> None:
        objects = context.store("objects")
        units = _load_units(context)
        progress = context.progress("extract entities", len(units))
        if self.extractor == "nlp":
            options = nlp_extraction.NlpOptions(max_entities_per_chunk=self.max_entities_per_chunk)
            found = await in_thread(lambda: [nlp_extraction.extract_entities(u.text, options) for u in units])
            progress.advance(len(units))
        else:
            requests = [
                JsonRequest("entities", u.text, llm_extraction.entity_messages(u.text), llm_extraction.ENTITY_SCHEMA,
                            llm_extraction.validate_entities)
                for u in units
            ]

            def done(index: int, outcome: LlmOutcome) -> None:
                progress.advance()
                if outcome.status != "valid":
                    unit = units[index]
                    report_llm_failure(
                        context, outcome, subject=("chunk", unit.id), what=f"entities of chunk {unit.id}",
                        action="skipped_chunk", outcome_text="No entities were taken from this chunk; the build went on.",
                    )
                    retry_if_unreachable(context, outcome, unit)

            outcomes = await ask_json(context, self._settings(), requests, cache=llm_cache(context), on_outcome=done)
            found = [
                llm_extraction.entities_from_answer(o.value)[: self.max_entities_per_chunk * 4] if o.status == "valid" else []
                for o in outcomes
            ]
        progress.close()
        entities_of = {u.id: f for u, f in zip(units, found)}
        extractions = []
        for document_id, members in _by_document(units).items():
            records = []
            for unit in members:
                entities = [{**e, "chunk_ids": evidence_chunk_ids(unit, e["name"])} for e in entities_of[unit.id]]
                records.append({"chunk_id": unit.id, "entities": entities, "relations": []})
                context.count("entities_found", len(entities))
            extractions.append({"document_id": document_id, "chunks": records})
        keys = []
        for part, start in enumerate(range(0, len(extractions), DOCUMENTS_PER_FILE)):
            key = extraction_key(context.run_id, part)
            objects.put_json(key, {"extractor": self.extractor, "documents": extractions[start : start + DOCUMENTS_PER_FILE]})
            keys.append(key)
        context.count("chunks", len(units))
        context.set_artifact(EXTRACTION_KEYS, keys)

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=(f"objects/{EXTRACT_PREFIX.rstrip('/')}", "objects/graph/draft"), description="graph extraction files")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        forget_documents(context.store("objects"), document_ids)


@attrs.frozen
class ExtractRelations:
    """Find relations ``{source, target, type, name, description}`` between entities of the same chunk."""

    name: ClassVar[str] = "extract_relations"

    extractor: str = attrs.field(default="llm", validator=check_extractor)
    model: str | None = None
    concurrency: int = attrs.field(default=8, validator=check_positive)
    max_attempts: int = attrs.field(default=3, validator=check_positive)
    timeout: float = attrs.field(default=300.0, validator=number(above=0))
    max_relations_per_chunk: int = attrs.field(default=10, validator=check_positive)

    @property
    def requirements(self) -> StepRequirements:
        components = {store_ref("objects")}
        if self.extractor == "llm":
            components.add(language_ref(self.model))
        return StepRequirements(components=frozenset(components), artifacts=frozenset({"chunk_keys", EXTRACTION_KEYS}))

    def _settings(self) -> CallSettings:
        return call_settings(self.model, llm_extraction.PROMPT_VERSION, self.concurrency, self.max_attempts, self.timeout)

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({RELATIONS_EXTRACTED}))

    async def run(self, context: StepContextProtocol) -> None:
        objects = context.store("objects")
        units = {u.id: u for u in _load_units(context)}
        keys = list(context.get_artifact(EXTRACTION_KEYS))
        files = [objects.get_json(k) for k in keys]
        work = [(record, units[record["chunk_id"]]) for f in files for d in f["documents"] for record in d["chunks"] if record["chunk_id"] in units]
        progress = context.progress("extract relations", len(work))
        if self.extractor == "nlp":
            options = nlp_extraction.NlpOptions(max_relations_per_chunk=self.max_relations_per_chunk)
            found = await in_thread(
                lambda: [nlp_extraction.extract_relations(unit.text, record["entities"], options) for record, unit in work]
            )
            progress.advance(len(work))
        else:
            asked = []  # (index in work, request): a chunk with fewer than two entities has no relation to ask about
            for index, (record, unit) in enumerate(work):
                names = list(dict.fromkeys(e["name"] for e in record["entities"]))
                if len(names) < 2:
                    progress.advance()
                    continue
                asked.append((index, JsonRequest(
                    "relations", unit.text + "\x1e" + "\n".join(names), llm_extraction.relation_messages(unit.text, names),
                    llm_extraction.RELATION_SCHEMA, llm_extraction.relation_validator(names),
                )))

            def done(position: int, outcome: LlmOutcome) -> None:
                progress.advance()
                if outcome.status != "valid":
                    unit = work[asked[position][0]][1]
                    report_llm_failure(
                        context, outcome, subject=("chunk", unit.id), what=f"relations of chunk {unit.id}",
                        action="skipped_chunk", outcome_text="No relations were taken from this chunk; its entities were kept.",
                    )
                    retry_if_unreachable(context, outcome, unit)

            outcomes = await ask_json(context, self._settings(), [r for _, r in asked], cache=llm_cache(context), on_outcome=done)
            found = [[] for _ in work]
            for (index, _), outcome in zip(asked, outcomes):
                if outcome.status == "valid":
                    found[index] = llm_extraction.relations_from_answer(outcome.value)[: self.max_relations_per_chunk * 4]
        progress.close()
        for (record, unit), relations in zip(work, found):
            by_name = {normalize_name(e["name"]): e for e in record["entities"]}
            record["relations"] = []
            for relation in relations:
                source, target = by_name[normalize_name(relation["source"])], by_name[normalize_name(relation["target"])]
                # a relation is evidenced by the member chunks that support both endpoints
                shared = [c for c in source["chunk_ids"] if c in target["chunk_ids"]] or evidence_chunk_ids(unit, relation["source"])
                record["relations"].append({**relation, "chunk_ids": shared})
            context.count("relations_found", len(record["relations"]))
        for key, data in zip(keys, files):
            objects.put_json(key, data)
        context.set_artifact(RELATIONS_EXTRACTED, keys)

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=(), description="relations live in the extraction files of extract_entities")
