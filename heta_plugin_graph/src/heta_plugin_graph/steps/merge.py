"""``MergeGraphIntoStore``: add the run's documents to an existing graph, incrementally.

New entities whose id (normalised name + type) is already stored simply gain
evidence. Every other new entity is embedded once; its nearest stored
entities (cosine >= ``similarity_threshold``, at most ``candidates``) go to the
language model, which says which one it is, if any. Matches fold into the
stored entity and relation endpoints follow. Nothing already in the store is
extracted or embedded again. Without ``semantic`` (no language model, e.g.
the nlp extractor) only exact matches merge.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from heta_framework.common.threads import in_thread
from heta_framework.common.validators import number
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements
from heta_framework.kb.stores import GraphStore, VectorStoreProtocol

from heta_plugin_graph import matching
from heta_plugin_graph.assets import GRAPH_ASSETS, GRAPH_SEARCH_MODE
from heta_plugin_graph.deletion import delete_graph_documents, preview_graph_removal
from heta_plugin_graph.draft import GraphDraft, merge_entities
from heta_plugin_graph.llm.calls import gather_calls
from heta_plugin_graph.steps.build import GRAPH_COMPONENTS, GRAPH_STORE_ARTIFACT, graph_cleanup, graph_paths
from heta_plugin_graph.steps.common import (
    EXTRACTION_KEYS,
    check_positive,
    check_similarity,
    language_ref,
    make_caller,
    report_llm_failure,
)
from heta_plugin_graph.steps.dedup import load_draft
from heta_plugin_graph.vectors import ENTITY_COLLECTION, embed_texts, entity_text
from heta_plugin_graph.writer import write_draft


@attrs.frozen
class MergeGraphIntoStore:
    """Merge the run's graph into the stored one (vector candidates + LLM decision)."""

    name: ClassVar[str] = "merge_graph_into_store"

    semantic: bool = True
    model: str | None = None
    similarity_threshold: float = attrs.field(default=0.8, validator=check_similarity)
    candidates: int = attrs.field(default=5, validator=check_positive)
    batch_size: int = attrs.field(default=10, validator=check_positive)
    concurrency: int = attrs.field(default=8, validator=check_positive)
    max_attempts: int = attrs.field(default=3, validator=check_positive)
    timeout: float = attrs.field(default=300.0, validator=number(above=0))
    embed_descriptions: bool = True  # as for BuildGraph

    @property
    def requirements(self) -> StepRequirements:
        components = set(GRAPH_COMPONENTS)
        if self.semantic:
            components.add(language_ref(self.model))
        return StepRequirements(components=frozenset(components), artifacts=frozenset({EXTRACTION_KEYS}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(
            artifacts=frozenset({GRAPH_STORE_ARTIFACT}),
            queries=frozenset({GRAPH_SEARCH_MODE}),
            search_assets=GRAPH_ASSETS,
        )

    async def run(self, context: StepContextProtocol) -> None:
        draft = load_draft(context)
        graph: GraphStore = context.store("graph")
        stored = await in_thread(graph.get_entities, [e.id for e in draft.entities])
        new = [e for e in draft.entities if e.id not in stored]
        context.count("entities_already_stored", len(draft.entities) - len(new))
        precomputed: dict[str, Any] = {}
        if new:
            embedder = context.embedding_model()
            vectors = await embed_texts(embedder, [entity_text(e.name, e.type, e.description if self.embed_descriptions else "") for e in new],
                                        context=context, concurrency=self.concurrency)
            precomputed = {e.id: v for e, v in zip(new, vectors)}
            if self.semantic:
                mapping = await self._match(context, draft, new, vectors)
                context.count("entities_matched_to_store", len(mapping))
                draft = merge_entities(draft, mapping)
        await write_draft(context, draft, precomputed=precomputed, embed_descriptions=self.embed_descriptions,
                        concurrency=self.concurrency)
        context.set_artifact(GRAPH_STORE_ARTIFACT, {"paths": graph_paths(context), **graph.counts()})

    async def _match(self, context: Any, draft: GraphDraft, new: list[Any], vectors: Any) -> dict[str, str]:
        vector_store: VectorStoreProtocol = context.store("vector")
        if not vector_store.has_collection(ENTITY_COLLECTION):
            return {}
        collection = vector_store.collection(ENTITY_COLLECTION)
        if len(collection) == 0:
            return {}
        in_draft = draft.entity_ids()
        hits = await asyncio.to_thread(collection.search, vectors, self.candidates + 1)
        graph: GraphStore = context.store("graph")
        candidate_ids = {
            h.id for row in hits for h in row if h.score >= self.similarity_threshold and h.id not in in_draft
        }
        stored = await in_thread(graph.get_entities, list(candidate_ids))
        items: list[matching.MatchItem] = []
        for entity, row in zip(new, hits):
            candidates = [stored[h.id] for h in row if h.id in stored and h.score >= self.similarity_threshold][: self.candidates]
            if candidates:
                items.append((f"n{len(items) + 1}", entity, candidates))
        context.count("match_candidates", len(items))
        if not items:
            return {}
        caller = make_caller(
            context, self.model, prompt_version=matching.PROMPT_VERSION,
            concurrency=self.concurrency, max_attempts=self.max_attempts, timeout=self.timeout,
        )

        async def decide(batch: list[matching.MatchItem]) -> dict[str, str]:
            subject = "\n".join(f"{e.id}:{e.name}:{e.type}:" + ",".join(c.id for c in cands) for _, e, cands in batch)
            outcome = await caller.call(
                kind="match", subject_text=subject, messages=matching.match_messages(batch),
                schema=matching.MATCH_SCHEMA, validate=matching.match_validator(batch),
            )
            if outcome.status == "valid":
                return matching.mapping_from_decisions(outcome.value, batch)
            for _, entity, _ in batch:
                report_llm_failure(
                    context, outcome, subject=("entity", entity.name), what=f"matching {entity.name!r} to the stored graph",
                    action="kept_original_records", outcome_text="The entity was added as new; stored entities were not changed.",
                )
            return {}

        batches = [items[i : i + self.batch_size] for i in range(0, len(items), self.batch_size)]
        mapping: dict[str, str] = {}
        for part in await gather_calls(decide(b) for b in batches):
            mapping.update(part)
        return mapping

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return graph_cleanup(artifacts)

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        await delete_graph_documents(context, document_ids)

    async def preview_removal(self, context: StepContextProtocol, document_ids: list[str]) -> dict[str, int]:
        return await preview_graph_removal(context, document_ids)
