"""The build step ``leanrag_aggregate``: LeanRAG's semantic aggregation after the graph plugin's steps.

It also runs on ``kb.delete_documents()`` (after the graph step has removed the documents' facts,
recipe order): clusters the removal touched are aggregated again, extractively, with no language
model call; the next build summarises them with the model when the recipe has one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import numpy as np
from heta_framework.common.threads import in_thread
from heta_framework.common.validators import number, positive_whole_number, whole_number
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, model_ref, store_ref
from heta_plugin_graph.llm.asking import CallSettings
from heta_plugin_graph.steps.build import GRAPH_STORE_ARTIFACT

from heta_plugin_leanrag import persist, summaries
from heta_plugin_leanrag.aggregation import AggregationSettings, Aggregator


@attrs.frozen
class SemanticAggregation:
    """LeanRAG's hierarchy: entities clustered by their vectors into aggregates, layer by layer, with relations between them."""

    name: ClassVar[str] = "leanrag_aggregate"

    #: members per cluster aimed at (a layer of n nodes has ceil(n / cluster_size) clusters; a kept cluster
    #: that grows past twice this is split)
    cluster_size: int = attrs.field(default=10, validator=whole_number(2))
    #: aggregation stops at a layer with at most this many nodes (1: up to a single root)
    top_layer_size: int = attrs.field(default=1, validator=positive_whole_number)
    #: aggregate levels at most
    max_levels: int = attrs.field(default=4, validator=positive_whole_number)
    #: the k-means seed (the same graph and seed give the same hierarchy)
    seed: int = attrs.field(default=224, validator=whole_number(0))
    #: the language model's name in the recipe (``None``: ``models.language`` if the recipe has one)
    model: str | None = None
    #: False: extractive summaries even when the recipe has a language model
    use_language_model: bool = True
    #: a relation between two aggregates resting on at least this many member relations is described by the
    #: model (fewer: by what those relations say)
    relation_model_threshold: int = attrs.field(default=3, validator=positive_whole_number)
    concurrency: int = attrs.field(default=8, validator=positive_whole_number)
    max_attempts: int = attrs.field(default=3, validator=positive_whole_number)
    timeout: float = attrs.field(default=300.0, validator=number(above=0))

    @property
    def requirements(self) -> StepRequirements:
        components = {store_ref("graph"), store_ref("objects"), store_ref("vector"), model_ref("embedding")}
        if self.model is not None and self.use_language_model:
            components.add(model_ref("language", self.model))
        return StepRequirements(components=frozenset(components), artifacts=frozenset({GRAPH_STORE_ARTIFACT}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(
            artifacts=frozenset({persist.HIERARCHY_ARTIFACT}), queries=frozenset({persist.MODE}), search_assets=(persist.HIERARCHY_ASSET,),
        )

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        # the aggregate vectors are a collection of the vector store, which its own cleanup removes with the store
        return StepCleanupPlan(paths=("objects/leanrag",), description="LeanRAG aggregates and their relations")

    def _settings(self) -> AggregationSettings:
        return AggregationSettings(self.cluster_size, self.top_layer_size, self.max_levels, self.seed, self.relation_model_threshold)

    def _llm(self, context: Any) -> CallSettings | None:
        """How summaries are asked for (``ask_json``), or ``None`` when they are extractive."""
        key = model_ref("language", self.model).key
        if not self.use_language_model or not context.has_component(key):
            return None
        return CallSettings(key, summaries.PROMPT_VERSION, self.concurrency, self.max_attempts, self.timeout)

    async def run(self, context: StepContextProtocol) -> None:
        context.set_artifact(persist.HIERARCHY_ARTIFACT, await self._aggregate(context, self._llm(context)))

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        await self._aggregate(context, None)  # removal never calls the model; the next build summarises with it

    async def _aggregate(self, context: Any, llm: CallSettings | None) -> dict[str, Any]:
        objects = context.store("objects")
        stored = await in_thread(persist.load_hierarchy, objects)
        aggregator = Aggregator(context, self._settings(), llm, stored)
        hierarchy = await aggregator.run()
        await self._index(context, aggregator, stored, hierarchy)
        await asyncio.to_thread(persist.save_hierarchy, objects, hierarchy)
        for name, amount in sorted(aggregator.counts.items()):
            context.count(name, amount)
        return {"aggregates": len(hierarchy.aggregates), "relations": len(hierarchy.relations), "levels": hierarchy.levels,
                "base_entities": len(hierarchy.parents)}

    async def _index(self, context: Any, aggregator: Aggregator, stored: persist.Hierarchy, hierarchy: persist.Hierarchy) -> None:
        """The aggregates' vectors (level modes 1 and 2 search them): written where new or changed, removed where gone."""
        vector_store = context.store("vector")
        name = persist.AGGREGATE_COLLECTION
        gone = sorted(set(stored.aggregates) - set(hierarchy.aggregates))
        if gone and vector_store.has_collection(name):
            await asyncio.to_thread(vector_store.collection(name).delete, gone)
        ids = sorted(hierarchy.aggregates)
        if not ids:
            return
        dimension = int(aggregator.vectors[ids[0]].shape[0])
        collection = vector_store.collection(name, dimension)
        written = await asyncio.to_thread(collection.get_metadata, ids)
        # compared with what the collection holds, not with the previous hierarchy: an interrupted build leaves them apart
        changed = [i for i in ids if written.get(i, {}).get("text_hash") != hierarchy.aggregates[i]["text_hash"]
                   or written.get(i, {}).get("level") != hierarchy.aggregates[i]["level"]]
        if changed:
            vectors = np.stack([aggregator.vectors[i] for i in changed])
            metadata = [{"level": hierarchy.aggregates[i]["level"], "text_hash": hierarchy.aggregates[i]["text_hash"]} for i in changed]
            await asyncio.to_thread(collection.upsert, changed, vectors, metadata)
        context.count("aggregate_vectors_written", len(changed))
