"""The three build steps, after the graph plugin's: aggregation, communities with reports, bridges.

- ``hirag_hierarchical_aggregation``: layers of summary entities above the graph (``hierarchy.py``);
  a summary per cluster by the recipe's language model (one call per cluster of two or more,
  cached by the cluster's content) or extractive without one.
- ``hirag_community``: Leiden communities of the layered graph (GraphRAG's detection, incremental
  by connected component) and a GraphRAG report per community (one call per community, cached).
- ``hirag_bridges``: each community's key entities and the paths to its nearest communities.

All three also run on ``kb.delete_documents()`` (after the graph step has removed the
documents' facts, recipe order), without the language model: what changed gets an extractive
summary or report, and the next build asks the model for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
from heta_framework.common.threads import in_thread
from heta_framework.common.validators import number, positive_whole_number, whole_number
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, model_ref, store_ref
from heta_plugin_graph.llm.asking import CallSettings, JsonRequest, ask_json
from heta_plugin_graph.llm.cache import StateLlmCache
from heta_plugin_graph.steps.build import GRAPH_STORE_ARTIFACT
from heta_plugin_graph.vectors import embed_texts, entity_text
from heta_plugin_graphrag import reports
from heta_plugin_graphrag.communities import Community, Detection, DetectionSettings, detect

from heta_plugin_hirag import bridges, persist, summaries
from heta_plugin_hirag.hierarchy import (
    Cluster,
    Hierarchy,
    Layer,
    LayerSettings,
    Node,
    centrality_order,
    cluster_id,
    content_hash,
    digest,
    plan_layer,
    summary_text,
)
from heta_plugin_hirag.layered import LayeredGraph, documents_of

#: the knowledge-base state's cache the summary and report answers are kept in (by model, prompt version and content)
LLM_CACHE_NAME = "hirag_llm"
CLEANUP = StepCleanupPlan(paths=("objects/hirag",), description="HiRAG hierarchy, communities, reports and bridges")


@attrs.frozen
class _AsksModel:
    """The options of a step that may ask the language model, and how it asks."""

    #: the language model's name in the recipe (``None``: ``models.language`` if the recipe has one)
    model: str | None = None
    #: False: extractive output even when the recipe has a language model
    use_language_model: bool = True
    concurrency: int = attrs.field(default=8, validator=positive_whole_number)
    max_attempts: int = attrs.field(default=3, validator=positive_whole_number)
    timeout: float = attrs.field(default=300.0, validator=number(above=0))

    def _language(self) -> set[Any]:
        return {model_ref("language", self.model)} if self.model is not None and self.use_language_model else set()

    def _settings(self, context: Any, prompt_version: str) -> CallSettings | None:
        """How the model is asked (``ask_json``), or ``None`` for extractive output."""
        key = model_ref("language", self.model).key
        if not self.use_language_model or not context.has_component(key):
            return None
        return CallSettings(key, prompt_version, self.concurrency, self.max_attempts, self.timeout)


def _up_to_date(old: Mapping[str, Any] | None, content: str, wanted_source: str) -> bool:
    if old is None or old.get("content_hash") != content:
        return False
    # extractive output is redone once a model is there; a fallback (the model's answer stayed invalid) is kept
    return old.get("source") != "extractive" or wanted_source == "extractive"


def _outcome_source(context: Any, outcome: Any, subject: tuple[str, str], what: str, *, invalid_code: str, failed_code: str) -> str:
    """The source of an output the model did not give, after a coded issue: whether asking again may help."""
    action = f"wrote_extractive_{what}"
    if outcome.status == "invalid":
        context.report(
            invalid_code, f"The language model's {what} for {subject[0]} {subject[1]} stayed invalid after {outcome.attempts} tries: "
            f"{outcome.error[:200]}", subject=subject, action=action,
            outcome=f"It has an extractive {what}; the invalid answer is cached, so rebuilds do not ask again.",
            details={"attempt_count": outcome.attempts},
        )
        return "extractive_fallback"
    context.report(
        failed_code, f"The language model could not be reached for {subject[0]} {subject[1]} after retries: {outcome.error[:200]}",
        subject=subject, action=action, outcome=f"It has an extractive {what}; the next build asks the model again.",
        details={"attempt_count": outcome.attempts},
    )
    return "extractive"


# --- 1. hierarchical aggregation ----------------------------------------------------------------------


def _base_nodes(graph: Any) -> list[Node]:
    ids = graph.entity_ids()
    entities = graph.get_entities(ids)
    rows = graph.evidence("entity", ids)
    return [
        Node(e.id, e.name, e.type, e.description, entity_text(e.name, e.type, e.description), frozenset(r[1] for r in rows.get(e.id, ())))
        for e in (entities[i] for i in sorted(entities))
    ]


@attrs.frozen
class HierarchicalAggregation(_AsksModel):
    """Layers of summary entities above the graph's entities: k-means on their embeddings, a summary per cluster."""

    name: ClassVar[str] = "hirag_hierarchical_aggregation"

    #: nodes per cluster at most (k-means splits a larger cluster again)
    cluster_size: int = attrs.field(default=10, validator=whole_number(2))
    #: a layer with this many nodes or fewer is not clustered again
    min_layer_size: int = attrs.field(default=3, validator=positive_whole_number)
    #: stop when the clusters would be more than this share of the layer's nodes (the layer stops shrinking)
    stop_ratio: float = attrs.field(default=0.8, validator=number(above=0, maximum=1))
    #: layers of summary entities at most
    max_layers: int = attrs.field(default=4, validator=positive_whole_number)
    #: tokens of member descriptions the model is shown per cluster at most (most central members first)
    max_cluster_tokens: int = attrs.field(default=4000, validator=positive_whole_number)
    seed: int = 224

    @property
    def requirements(self) -> StepRequirements:
        components = {store_ref("graph"), store_ref("objects"), store_ref("vector"), model_ref("embedding"), *self._language()}
        return StepRequirements(components=frozenset(components), artifacts=frozenset({GRAPH_STORE_ARTIFACT}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({persist.HIERARCHY_ARTIFACT}), queries=frozenset({persist.LOCAL_MODE}),
                                search_assets=(persist.HIERARCHY_ASSET,))

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        # the summary vectors are a collection of the vector store, which its own cleanup removes with the store
        return CLEANUP

    async def run(self, context: StepContextProtocol) -> None:
        context.set_artifact(persist.HIERARCHY_ARTIFACT, await self._aggregate(context, self._settings(context, summaries.PROMPT_VERSION)))

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        await self._aggregate(context, None)  # removal never calls the model; the next build asks it for what changed

    def layer_settings(self) -> LayerSettings:
        return LayerSettings(self.cluster_size, self.min_layer_size, self.stop_ratio, self.max_layers, self.seed)

    async def _aggregate(self, context: Any, settings: CallSettings | None) -> dict[str, Any]:
        graph, objects = context.store("graph"), context.store("objects")
        layering = self.layer_settings()
        previous = Hierarchy.from_json(await in_thread(persist.load, objects, persist.HIERARCHY_KEY))
        reusable = previous if previous.settings == layering.fingerprint() else Hierarchy()
        nodes = await in_thread(_base_nodes, graph)
        embedder = context.embedding_model()
        layers: list[Layer] = []
        written = reused = 0
        for layer_number in range(1, self.max_layers + 1):
            if len(nodes) <= self.min_layer_size:
                break
            vectors = await embed_texts(embedder, [n.text for n in nodes], context=context)
            old = reusable.layer(layer_number)
            groups = await in_thread(plan_layer, layer_number, nodes, vectors, old, layering)
            if len(groups) > self.stop_ratio * len(nodes):
                break  # the layer stops shrinking: most nodes would stand alone
            clusters, made = await self._summarise(context, settings, layer_number, groups, nodes, vectors, old)
            written += made
            reused += sum(1 for c in clusters if c.summary is not None) - made
            layers.append(Layer(layer_number, {n.id: n.text_hash for n in nodes}, tuple(clusters)))
            by_id = {n.id: n for n in nodes}
            carried = [by_id[c.members[0]] for c in clusters if c.summary is None]
            made_nodes = [Node(c.summary_id or "", c.summary["name"], c.summary["type"], c.summary["description"],
                               summary_text(c.summary["name"], c.summary["type"], c.summary["description"]),
                               frozenset(c.document_ids), layer_number) for c in clusters if c.summary is not None]
            nodes = sorted(carried + made_nodes, key=lambda n: n.id)
        hierarchy = Hierarchy(layering.fingerprint(), tuple(layers))
        removed = sorted(set(previous.summaries()) - set(hierarchy.summaries()))
        await self._index(context, hierarchy, removed)
        await in_thread(persist.save, objects, persist.HIERARCHY_KEY, hierarchy.to_json())
        total = len(hierarchy.summaries())
        context.count("summaries_written", written)
        context.count("summaries_reused", reused)
        return {"layers": len(layers), "summary_entities": total, "summaries_written": written, "summaries_removed": len(removed)}

    async def _summarise(self, context: Any, settings: CallSettings | None, number: int, groups: Sequence[list[str]],
                         nodes: Sequence[Node], vectors: np.ndarray, old: Layer | None) -> tuple[list[Cluster], int]:
        by_id = {n.id: n for n in nodes}
        previous = {c.id: c for c in old.clusters} if old is not None else {}
        wanted_source = "language_model" if settings is not None else "extractive"
        clusters: list[Cluster] = []
        todo: list[tuple[int, list[Node]]] = []
        for members in groups:
            cid, content = cluster_id(number, members), content_hash(members, by_id)
            documents = tuple(documents_of(by_id[m].documents for m in members))
            if len(members) == 1:
                clusters.append(Cluster(cid, number, tuple(members), content, document_ids=documents))
                continue
            prior = previous.get(cid)
            if prior is not None and prior.summary is not None and _up_to_date(
                    {"content_hash": prior.content_hash, "source": prior.source}, content, wanted_source):
                clusters.append(attrs.evolve(prior, document_ids=documents))  # what it rests on may have grown
                continue
            ordered = [by_id[m] for m in centrality_order(members, nodes, vectors)]
            todo.append((len(clusters), ordered))
            clusters.append(Cluster(cid, number, tuple(members), content, document_ids=documents))
        outcomes: list[Any] = [None] * len(todo)
        if settings is not None and todo:
            requests = []
            for index, ordered in todo:
                text = summaries.subject(ordered, self.max_cluster_tokens)
                requests.append(JsonRequest("hirag_summary", clusters[index].content_hash + "\n" + text, summaries.messages(text),
                                            summaries.SUMMARY_SCHEMA, summaries.checker(ordered)))
            outcomes = await ask_json(context, settings, requests, cache=StateLlmCache(context.cache(LLM_CACHE_NAME)))
        for (index, ordered), outcome in zip(todo, outcomes):
            cluster = clusters[index]
            if outcome is not None and outcome.status == "valid":
                summary, source = summaries.cleaned(outcome.value), "language_model"
            else:
                source = "extractive"
                if outcome is not None:
                    source = _outcome_source(context, outcome, ("cluster", cluster.id), "summary",
                                             invalid_code="hirag_summary_invalid", failed_code="hirag_summary_failed")
                summary = summaries.extractive(ordered)
            clusters[index] = attrs.evolve(cluster, summary=summary, source=source)
        return clusters, len(todo)

    async def _index(self, context: Any, hierarchy: Hierarchy, removed: list[str]) -> None:
        """The summary entities' vectors, in a collection of their own (never the graph's)."""
        vector_store = context.store("vector")
        exists = vector_store.has_collection(persist.SUMMARY_COLLECTION)
        if removed and exists:
            await in_thread(vector_store.collection(persist.SUMMARY_COLLECTION).delete, removed)
        found = hierarchy.summaries()
        if not found:
            return
        ids = sorted(found)
        hashes = {i: digest(found[i].text)[:16] for i in ids}  # as Node.text_hash
        stored = await in_thread(vector_store.collection(persist.SUMMARY_COLLECTION).get_metadata, ids) if exists else {}
        stale = [i for i in ids if (stored.get(i) or {}).get("text_hash") != hashes[i]]
        if not stale:
            return
        vectors = await embed_texts(context.embedding_model(), [found[i].text for i in stale], context=context)
        collection = vector_store.collection(persist.SUMMARY_COLLECTION, int(vectors.shape[1]))
        metadata = [{"layer": found[i].layer, "text_hash": hashes[i]} for i in stale]
        await in_thread(collection.upsert, stale, vectors, metadata)


# --- 2. communities and reports -------------------------------------------------------------------------


def _view(context: Any) -> LayeredGraph:
    hierarchy = Hierarchy.from_json(persist.load(context.store("objects"), persist.HIERARCHY_KEY))
    return LayeredGraph(context.store("graph"), hierarchy)


@attrs.frozen
class HiRagCommunity(_AsksModel):
    """Leiden communities of the layered graph (GraphRAG's, fixed seed) and a report for each."""

    name: ClassVar[str] = "hirag_community"

    #: a community with more nodes than this is split again, one level down
    max_cluster_size: int = attrs.field(default=10, validator=positive_whole_number)
    #: community levels at most (level 0 is the coarsest)
    max_levels: int = attrs.field(default=3, validator=positive_whole_number)
    #: Leiden's resolution (higher: smaller communities)
    resolution: float = attrs.field(default=1.0, validator=number(minimum=0))
    #: each level down multiplies the resolution by this
    sublevel_resolution_factor: float = attrs.field(default=2.0, validator=number(minimum=1))
    seed: int = 0xDEADBEEF

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=frozenset({store_ref("graph"), store_ref("objects"), *self._language()}),
                                artifacts=frozenset({persist.HIERARCHY_ARTIFACT}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({persist.COMMUNITIES_ARTIFACT}),
                                queries=frozenset({persist.NOBRIDGE_MODE, persist.GLOBAL_MODE}), search_assets=(persist.REPORTS_ASSET,))

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return CLEANUP

    async def run(self, context: StepContextProtocol) -> None:
        context.set_artifact(persist.COMMUNITIES_ARTIFACT, await self._communities(context, self._settings(context, reports.PROMPT_VERSION)))

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        await self._communities(context, None)

    async def _communities(self, context: Any, settings: CallSettings | None) -> dict[str, Any]:
        objects = context.store("objects")
        detection_settings = DetectionSettings(self.max_cluster_size, self.max_levels, self.resolution, self.sublevel_resolution_factor, self.seed)

        def work() -> Any:
            view = _view(context)
            change = detect(view, Detection.from_json(persist.load(objects, persist.COMMUNITIES_KEY)), detection_settings)
            persist.save(objects, persist.COMMUNITIES_KEY, change.detection.to_json())
            stored = dict((persist.load(objects, persist.REPORTS_KEY) or {}).get("reports", {}))
            return view, change, stored

        view, change, stored = await in_thread(work)
        communities = change.detection.communities
        wanted_source = "language_model" if settings is not None else "extractive"
        todo = [c for c in communities if not _up_to_date(stored.get(c.id), c.content_hash, wanted_source)]
        materials = await in_thread(lambda: [reports.community_material(view, c) for c in todo])
        asked = [i for i, material in enumerate(materials) if material.entities] if settings is not None else []
        outcomes: dict[int, Any] = {}
        if settings is not None and asked:
            requests = [JsonRequest("community_report", todo[i].content_hash + "\n" + reports.report_subject(materials[i]),
                                    reports.report_messages(materials[i]), reports.REPORT_SCHEMA, reports.report_problem) for i in asked]
            answered = await ask_json(context, settings, requests, cache=StateLlmCache(context.cache(LLM_CACHE_NAME)))
            outcomes = dict(zip(asked, answered))
        made: dict[str, dict[str, Any]] = {}
        for index, (community, material) in enumerate(zip(todo, materials)):
            report, source = None, "extractive"
            if (outcome := outcomes.get(index)) is not None:
                if outcome.status == "valid":
                    report, source = dict(outcome.value), "language_model"
                else:
                    source = _outcome_source(context, outcome, ("community", community.id), "report",
                                             invalid_code="hirag_report_invalid", failed_code="hirag_report_failed")
            made[community.id] = {
                "content_hash": community.content_hash, "level": community.level, "parent": community.parent, "source": source,
                "report": report or reports.extractive_report(community, material), "chunk_ids": list(material.chunk_ids),
                "entity_ids": list(community.entity_ids),
            }
        alive = {c.id for c in communities}
        result = {cid: entry for cid, entry in stored.items() if cid in alive} | made
        await in_thread(_set_report_documents, view, communities, result)
        await in_thread(persist.save, objects, persist.REPORTS_KEY, {"format": 1, "reports": result})
        context.count("communities_reported", len(made))
        context.count("community_reports_reused", len(communities) - len(made))
        return {"communities": len(communities), "reports": len(result), "reported": len(made),
                "communities_redetected": len(change.communities_changed), "components_kept": change.components_kept}


def _set_report_documents(view: LayeredGraph, communities: Sequence[Community], result: dict[str, dict[str, Any]]) -> None:
    """What each report rests on: every document of every member (a summary entity's: all of its members')."""
    members = sorted({m for c in communities for m in c.entity_ids})
    documents = view.entity_documents(members)
    for c in communities:
        result[c.id]["document_ids"] = documents_of(documents.get(m, frozenset()) for m in c.entity_ids)


# --- 3. bridges ---------------------------------------------------------------------------------------


@attrs.frozen
class HiRagBridges:
    """Each community's key entities and the shortest paths from them to the nearest other communities."""

    name: ClassVar[str] = "hirag_bridges"

    #: key entities per community (best connected inside it; graph entities before summary entities)
    key_entities: int = attrs.field(default=3, validator=positive_whole_number)
    #: edges a bridge has at most
    max_hops: int = attrs.field(default=4, validator=positive_whole_number)
    #: bridges from each community at most (to its nearest communities of the same level)
    max_bridges: int = attrs.field(default=5, validator=positive_whole_number)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=frozenset({store_ref("graph"), store_ref("objects")}),
                                artifacts=frozenset({persist.COMMUNITIES_ARTIFACT}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({persist.BRIDGES_ARTIFACT}), queries=frozenset({persist.HI_MODE, persist.BRIDGE_MODE}),
                                search_assets=(persist.BRIDGES_ASSET,))

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return CLEANUP

    async def run(self, context: StepContextProtocol) -> None:
        context.set_artifact(persist.BRIDGES_ARTIFACT, await self._bridges(context))

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        await self._bridges(context)

    async def _bridges(self, context: Any) -> dict[str, Any]:
        objects = context.store("objects")
        settings = bridges.BridgeSettings(self.key_entities, self.max_hops, self.max_bridges)

        def work() -> Any:
            view = _view(context)
            detection = Detection.from_json(persist.load(objects, persist.COMMUNITIES_KEY))
            change = bridges.build(view, detection.communities, persist.load(objects, persist.BRIDGES_KEY), settings)
            persist.save(objects, persist.BRIDGES_KEY, change.data)
            return change

        change = await in_thread(work)
        context.count("bridge_sources_recomputed", change.sources_recomputed)
        context.count("bridge_sources_kept", change.sources_kept)
        paths = sum(len(found) for found in change.data["bridges"].values())
        return {"bridges": paths, "sources_recomputed": change.sources_recomputed, "sources_kept": change.sources_kept}


STEPS = (HierarchicalAggregation, HiRagCommunity, HiRagBridges)
