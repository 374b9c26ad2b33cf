"""``DeduplicateEntities`` and ``DeduplicateRelations``: extraction files -> a deduplicated ``GraphDraft``.

Entities: exact groups (normalised name + type), then, when ``semantic`` (the
default with an LLM extractor), candidates by embedding cosine similarity >=
``similarity_threshold`` confirmed by the language model in batches of
``batch_size`` groups. A batch whose answer stays unusable keeps its records
unmerged (``invalid_llm_output`` / ``llm_call_failed``, action
``kept_original_records``). Relations: exact groups (source, target, type)
after entity ids were rewritten.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from heta_framework.common.validators import number
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, model_ref, store_ref

from heta_plugin_graph import dedup
from heta_plugin_graph.draft import (
    GraphDraft,
    draft_from_extractions,
    draft_key,
    iter_extractions,
    merge_entities,
    merge_relations,
)
from heta_plugin_graph.llm.calls import gather_calls
from heta_plugin_graph.steps.common import (
    DRAFT_KEY,
    EXTRACTION_KEYS,
    check_positive,
    check_similarity,
    language_ref,
    make_caller,
    optional_artifact,
    report_llm_failure,
)
from heta_plugin_graph.vectors import embed_texts


def load_draft(context: Any) -> GraphDraft:
    """The latest draft of this run, or an exactly-deduplicated one straight from the extraction files."""
    objects = context.store("objects")
    key = optional_artifact(context, DRAFT_KEY)
    if key and objects.exists(key):
        return GraphDraft.from_dict(objects.get_json(key))
    return draft_from_extractions(iter_extractions(objects, context.get_artifact(EXTRACTION_KEYS)))


def save_draft(context: Any, draft: GraphDraft, stage: str) -> None:
    key = draft_key(context.run_id, stage)
    context.store("objects").put_json(key, draft.to_dict())
    context.set_artifact(DRAFT_KEY, key)


@attrs.frozen
class DeduplicateEntities:
    """Merge entity records that name the same thing; rewrite relation endpoints accordingly."""

    name: ClassVar[str] = "deduplicate_entities"

    semantic: bool = True
    model: str | None = None
    similarity_threshold: float = attrs.field(default=0.85, validator=check_similarity)
    batch_size: int = attrs.field(default=10, validator=check_positive)
    concurrency: int = attrs.field(default=8, validator=check_positive)
    max_attempts: int = attrs.field(default=3, validator=check_positive)
    timeout: float = attrs.field(default=300.0, validator=number(above=0))

    @property
    def requirements(self) -> StepRequirements:
        components = {store_ref("objects")}
        if self.semantic:
            components |= {language_ref(self.model), model_ref("embedding")}
        return StepRequirements(components=frozenset(components), artifacts=frozenset({EXTRACTION_KEYS}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({DRAFT_KEY}))

    async def run(self, context: StepContextProtocol) -> None:
        draft = load_draft(context)
        context.count("entities_in", len(draft.entities))
        merged = draft
        if self.semantic and len(draft.entities) > 1:
            merged = await self._semantic(context, draft)
        context.count("entities_out", len(merged.entities))
        # an unchanged draft is not written: later steps rebuild it from the extraction files more cheaply
        if merged is not draft:
            save_draft(context, merged, "entities")

    async def _semantic(self, context: Any, draft: GraphDraft) -> GraphDraft:
        entities = list(draft.entities)
        embedder = context.embedding_model()
        vectors = await embed_texts(embedder, [dedup.name_text(e) for e in entities], context=context,
                                    concurrency=self.concurrency)
        groups = [part for g in await asyncio.to_thread(dedup.similar_groups, vectors, self.similarity_threshold) for part in dedup.split_large(g)]
        context.count("candidate_groups", len(groups))
        if not groups:
            return draft
        labelled = [(f"g{index + 1}", [entities[i] for i in group]) for index, group in enumerate(groups)]
        caller = make_caller(
            context, self.model, prompt_version=dedup.PROMPT_VERSION,
            concurrency=self.concurrency, max_attempts=self.max_attempts, timeout=self.timeout,
        )

        async def decide(batch: list[tuple[str, list[Any]]]) -> dict[str, str]:
            subject = "\n".join(f"{gid}:" + "|".join(f"{e.id}:{e.name}:{e.type}" for e in members) for gid, members in batch)
            outcome = await caller.call(
                kind="dedup", subject_text=subject, messages=dedup.dedup_messages(batch),
                schema=dedup.DEDUP_SCHEMA, validate=dedup.dedup_validator(batch),
            )
            if outcome.status == "valid":
                return dedup.mapping_from_answer(outcome.value, batch)
            for _, members in batch:
                report_llm_failure(
                    context, outcome, subject=("dedup_group", members[0].name), what=f"dedup group {members[0].name!r}",
                    action="kept_original_records", outcome_text="The group was not merged, and original records were kept.",
                )
            return {}

        batches = [labelled[i : i + self.batch_size] for i in range(0, len(labelled), self.batch_size)]
        mapping: dict[str, str] = {}
        for part in await gather_calls(decide(b) for b in batches):
            mapping.update(part)
        context.count("entities_merged", len(mapping))
        return merge_entities(draft, mapping)

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/graph/draft",), description="deduplicated graph drafts")


@attrs.frozen
class DeduplicateRelations:
    """One relation per (source, target, type); evidence of the duplicates is kept on the survivor."""

    name: ClassVar[str] = "deduplicate_relations"

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=frozenset({store_ref("objects")}), artifacts=frozenset({EXTRACTION_KEYS}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({DRAFT_KEY}))

    async def run(self, context: StepContextProtocol) -> None:
        draft = load_draft(context)
        relations = merge_relations(draft.relations)
        context.count("relations_in", len(draft.relations))
        context.count("relations_out", len(relations))
        if relations != draft.relations:
            save_draft(context, attrs.evolve(draft, relations=relations), "relations")

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/graph/draft",), description="deduplicated graph drafts")


