"""The two build steps: ``detect_communities`` then ``community_reports`` (after the graph plugin's steps).

Both also run on ``kb.delete_documents()`` (after the graph step has removed the
documents' facts, recipe order): communities are re-detected where the graph
changed and those communities get an extractive report, with no language-model
call; the next build re-reports them with the model when the recipe has one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from heta_framework.common.threads import in_thread
from heta_framework.common.validators import number, positive_whole_number
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, model_ref, store_ref
from heta_plugin_graph.llm.asking import CallSettings, JsonRequest, ask_json
from heta_plugin_graph.llm.cache import StateLlmCache
from heta_plugin_graph.steps.build import GRAPH_STORE_ARTIFACT
from heta_plugin_graph.vectors import embed_texts

from heta_plugin_graphrag import persist, reports
from heta_plugin_graphrag.communities import Community, DetectionSettings, detect

#: the knowledge-base state's cache the report answers are kept in (keyed by model, prompt version and content)
LLM_CACHE_NAME = "graphrag_llm"


@attrs.frozen
class DetectCommunities:
    """Hierarchical Leiden communities of the entity graph (fixed seed), re-detected only where the graph changed."""

    name: ClassVar[str] = "detect_communities"

    #: a community with more entities than this is split again, one level down
    max_cluster_size: int = attrs.field(default=10, validator=positive_whole_number)
    #: levels at most (level 0 is the coarsest)
    max_levels: int = attrs.field(default=3, validator=positive_whole_number)
    #: Leiden's resolution (higher: smaller communities)
    resolution: float = attrs.field(default=1.0, validator=number(minimum=0))
    #: each level down multiplies the resolution by this (finer communities inside coarse ones)
    sublevel_resolution_factor: float = attrs.field(default=2.0, validator=number(minimum=1))
    seed: int = 0xDEADBEEF

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(
            components=frozenset({store_ref("graph"), store_ref("objects")}), artifacts=frozenset({GRAPH_STORE_ARTIFACT})
        )

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({persist.COMMUNITIES_ARTIFACT}))

    async def run(self, context: StepContextProtocol) -> None:
        context.set_artifact(persist.COMMUNITIES_ARTIFACT, await self._detect(context))

    async def _detect(self, context: Any) -> dict[str, int]:
        graph, objects = context.store("graph"), context.store("objects")
        settings = DetectionSettings(self.max_cluster_size, self.max_levels, self.resolution, self.sublevel_resolution_factor, self.seed)

        def work() -> Any:
            change = detect(graph, persist.load_detection(objects), settings)
            persist.save_detection(objects, change.detection)
            return change

        change = await in_thread(work)  # the detection is dropped with the step, not kept by a finished future
        summary = {
            "communities": len(change.detection.communities),
            "levels": 1 + max((c.level for c in change.detection.communities), default=-1),
            "communities_redetected": len(change.communities_changed),
            "communities_removed": len(change.communities_removed),
            "components_redetected": change.components_redetected,
            "components_kept": change.components_kept,
        }
        for key in ("communities_redetected", "communities_removed", "components_redetected", "components_kept"):
            context.count(key, summary[key])
        return summary

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan(paths=("objects/graphrag",), description="GraphRAG communities and reports")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        await self._detect(context)


@attrs.frozen
class CommunityReports:
    """A GraphRAG report per community: by the recipe's language model (1 call per community, cached), or extractive."""

    name: ClassVar[str] = "community_reports"

    #: the language model's name in the recipe (``None``: ``models.language`` if the recipe has one)
    model: str | None = None
    #: False: extractive reports even when the recipe has a language model
    use_language_model: bool = True
    concurrency: int = attrs.field(default=8, validator=positive_whole_number)
    max_attempts: int = attrs.field(default=3, validator=positive_whole_number)
    timeout: float = attrs.field(default=300.0, validator=number(above=0))

    @property
    def requirements(self) -> StepRequirements:
        components = {store_ref("graph"), store_ref("objects"), store_ref("vector"), model_ref("embedding")}
        if self.model is not None and self.use_language_model:
            components.add(model_ref("language", self.model))
        return StepRequirements(components=frozenset(components), artifacts=frozenset({persist.COMMUNITIES_ARTIFACT}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(
            artifacts=frozenset({persist.REPORTS_ARTIFACT}),
            queries=frozenset({persist.GLOBAL_MODE, persist.LOCAL_MODE}),
            search_assets=(persist.REPORTS_ASSET,),
        )

    def _settings(self, context: Any) -> CallSettings | None:
        """How reports are asked for (``ask_json``), or ``None`` when they are extractive."""
        key = model_ref("language", self.model).key
        if not self.use_language_model or not context.has_component(key):
            return None
        return CallSettings(key, reports.PROMPT_VERSION, self.concurrency, self.max_attempts, self.timeout)

    async def run(self, context: StepContextProtocol) -> None:
        context.set_artifact(persist.REPORTS_ARTIFACT, await self._report(context, self._settings(context)))

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        # the report vectors are a collection of the vector store, which its own cleanup removes with the store
        return StepCleanupPlan(paths=("objects/graphrag",), description="GraphRAG community reports")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        await self._report(context, None)  # removal never calls the model; the next build re-reports with it

    async def _report(self, context: Any, settings: CallSettings | None) -> dict[str, Any]:
        graph, objects = context.store("graph"), context.store("objects")
        detection, stored = await in_thread(lambda: (persist.load_detection(objects), persist.load_reports(objects)))
        communities = detection.communities
        wanted_source = "language_model" if settings is not None else "extractive"

        def up_to_date(c: Community) -> bool:
            old = stored.get(c.id)
            if old is None or old["content_hash"] != c.content_hash:
                return False
            # an extractive report is redone when a model is now there; a fallback (model failed) is kept as it was
            return old["source"] != "extractive" or wanted_source == "extractive"

        todo = [c for c in communities if not up_to_date(c)]
        materials = await in_thread(lambda: [reports.community_material(graph, c) for c in todo])
        # one question per community with entities, wherever the recipe's executor runs them (ask_json)
        asked = [i for i, material in enumerate(materials) if material.entities] if settings is not None else []
        requests = [
            JsonRequest("community_report", todo[i].content_hash + "\n" + reports.report_subject(materials[i]),
                        reports.report_messages(materials[i]), reports.REPORT_SCHEMA, reports.report_problem)
            for i in asked
        ]
        answered = []
        if settings is not None and requests:
            answered = await ask_json(context, settings, requests, cache=StateLlmCache(context.cache(LLM_CACHE_NAME)))
        outcomes = dict(zip(asked, answered))

        made: dict[str, dict[str, Any]] = {}
        for index, (community, material) in enumerate(zip(todo, materials)):
            report, source = None, "extractive"
            if (outcome := outcomes.get(index)) is not None:
                if outcome.status == "valid":
                    report, source = dict(outcome.value), "language_model"
                else:
                    _report_failure(context, community, outcome)
                    source = "extractive_fallback" if outcome.status == "invalid" else "extractive"
            if report is None:
                report = reports.extractive_report(community, material)
            made[community.id] = {
                "content_hash": community.content_hash, "level": community.level, "parent": community.parent,
                "source": source, "report": report, "chunk_ids": list(material.chunk_ids),
                "entity_ids": list(community.entity_ids),
            }
        alive = {c.id for c in communities}
        result = {cid: entry for cid, entry in stored.items() if cid in alive} | made
        removed = sorted(set(stored) - alive)
        await self._index(context, made, removed)
        await asyncio.to_thread(persist.save_reports, objects, result)
        context.count("communities_reported", len(made))
        context.count("community_reports_reused", len(communities) - len(made))
        return {"reports": len(result), "reported": len(made), "removed": len(removed)}

    async def _index(self, context: Any, made: Mapping[str, dict[str, Any]], removed: list[str]) -> None:
        """The report vectors global search ranks by (offline), in the vector store."""
        vector_store = context.store("vector")
        if removed and vector_store.has_collection(persist.REPORT_COLLECTION):
            await asyncio.to_thread(vector_store.collection(persist.REPORT_COLLECTION).delete, removed)
        if not made:
            return
        ids = sorted(made)
        vectors = await embed_texts(context.embedding_model(), [reports.report_text(made[i]["report"]) for i in ids], context=context)
        collection = vector_store.collection(persist.REPORT_COLLECTION, int(vectors.shape[1]))
        await asyncio.to_thread(collection.upsert, ids, vectors, [{"level": made[i]["level"]} for i in ids])


def _report_failure(context: Any, community: Community, outcome: Any) -> None:
    if outcome.status == "invalid":
        context.report(
            "graphrag_report_invalid",
            f"The language model's report for community {community.id} stayed invalid after {outcome.attempts} tries: {outcome.error[:200]}",
            subject=("community", community.id), action="wrote_extractive_report",
            outcome="The community has an extractive report; the invalid answer is cached, so rebuilds do not ask again.",
            details={"attempt_count": outcome.attempts},
        )
    else:
        context.report(
            "graphrag_report_failed",
            f"The language model could not be reached for community {community.id} after retries: {outcome.error[:200]}",
            subject=("community", community.id), action="wrote_extractive_report",
            outcome="The community has an extractive report; the next build asks the model again.",
            details={"attempt_count": outcome.attempts},
        )
