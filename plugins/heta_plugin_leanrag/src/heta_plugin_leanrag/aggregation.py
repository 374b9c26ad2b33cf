"""LeanRAG's semantic aggregation over the graph plugin's graph, layer by layer, incremental.

Layer 0 holds the base entities (their vectors embed the same text the graph's entity vectors do,
so the graph's embedding cache answers). Each layer's nodes are clustered by their vectors
(``clustering``); each cluster becomes an aggregate entity one level up, named and described by the
language model or extractively; the relations of the layer that cross two clusters become one
relation between their aggregates. The aggregates and those relations are the next layer, until a
layer has at most ``top_layer_size`` nodes or ``max_levels`` levels are built.

What an aggregate rests on: the documents of its members' evidence and of the relations among its
members (what its summary was written from). A relation between aggregates rests on the documents
of the member relations it stands for, and, when the model described it from the two aggregates'
summaries, on theirs too. The query side shows either whole only to callers who may read all of
them, and otherwise rebuilds them from what the caller may read (``reading``).

Incremental: the clusters of the previous build are kept (``clustering.assign``); a cluster whose
members and their content did not change keeps its aggregate as it was, and one whose content did
is summarised again. The language model's answers are cached by content (``ask_json``), so a
repeated, resumed or rebuilt build asks nothing it asked before.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np
from heta_framework.common.threads import in_thread
from heta_plugin_graph.llm.asking import CallSettings, JsonRequest, ask_json
from heta_plugin_graph.llm.cache import StateLlmCache
from heta_plugin_graph.vectors import embed_texts, entity_text

from heta_plugin_leanrag import summaries
from heta_plugin_leanrag.clustering import Assignment, assign, centrality, unit_rows
from heta_plugin_leanrag.persist import Hierarchy

#: the knowledge-base state's cache the language model's answers are kept in
LLM_CACHE_NAME = "leanrag_llm"
#: evidence chunks kept per aggregate and per relation between aggregates (those supporting the most leaves)
CHUNKS_KEPT = 32


def content_hash(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, sort_keys=True, default=list).encode("utf-8")).hexdigest()


@attrs.frozen
class AggregationSettings:
    cluster_size: int = 10
    top_layer_size: int = 1
    max_levels: int = 4
    seed: int = 224
    relation_model_threshold: int = 3

    @property
    def key(self) -> str:
        """What the clusters depend on: another key clusters every layer afresh (the stopping rules do not: they only
        decide how many layers there are)."""
        return content_hash("leanrag-clusters-v1", self.cluster_size, self.seed)[:16]


@attrs.frozen
class Node:
    """A node of one layer: a base entity (level 0) or an aggregate."""

    id: str
    level: int
    name: str
    description: str
    type: str
    documents: frozenset[str]
    chunks: Mapping[str, int]  # chunk id -> leaves it supports
    leaf_count: int
    #: a short name for it among others: an entity's name, a model's aggregate name, or an extractive
    #: aggregate's most central member's headline (extractive names of aggregates of aggregates stay short)
    headline: str


@attrs.frozen
class Edge:
    """A relation of one layer: a base relation (level 0) or a relation between two aggregates."""

    id: str
    source: str
    target: str
    line: str  # "A —name→ B: description", what prompts show
    text: str  # what it says
    documents: frozenset[str]
    base_relation_ids: tuple[str, ...]
    chunk_ids: tuple[str, ...]


def top_chunks(support: Mapping[str, int]) -> list[list[Any]]:
    return [[c, n] for c, n in sorted(support.items(), key=lambda item: (-item[1], item[0]))[:CHUNKS_KEPT]]


def read_graph(graph: Any) -> tuple[dict[str, Node], list[Edge]]:
    """The base layer: every entity of the graph, and every relation between two of them (through ``GraphStore``)."""
    entities = graph.get_entities(graph.entity_ids())
    entity_rows = graph.evidence("entity", list(entities))
    nodes = {}
    for entity_id, entity in entities.items():
        rows = entity_rows.get(entity_id, [])
        nodes[entity_id] = Node(entity_id, 0, entity.name, entity.description, entity.type, frozenset(r[1] for r in rows),
                                {r[0]: 1 for r in rows}, 1, entity.name)
    touching = graph.relations_touching(sorted(entities)) if entities else []
    relations = sorted({r.id: r for r in touching if r.source_id != r.target_id and r.source_id in entities and r.target_id in entities}.values(),
                       key=lambda r: r.id)
    relation_rows = graph.evidence("relation", [r.id for r in relations]) if relations else {}
    edges = []
    for r in relations:
        rows = relation_rows.get(r.id, [])
        head = f"{entities[r.source_id].name} —{r.name or r.type}→ {entities[r.target_id].name}"
        edges.append(Edge(r.id, r.source_id, r.target_id, f"{head}: {r.description}" if r.description else head, r.description or head,
                          frozenset(row[1] for row in rows), (r.id,), tuple(dict.fromkeys(row[0] for row in rows))))
    return nodes, edges


def _union(sets: Iterable[Iterable[str]]) -> frozenset[str]:
    out: set[str] = set()
    for s in sets:
        out.update(s)
    return frozenset(out)


class Aggregator:
    """One aggregation run: reads the graph, builds the layers, writes nothing (the step stores the result)."""

    def __init__(self, context: Any, settings: AggregationSettings, llm: CallSettings | None, previous: Hierarchy):
        self.context = context
        self.settings = settings
        self.llm = llm
        # another clustering setting: every layer is clustered afresh (summaries of unchanged content still come from the cache)
        self.previous = previous if previous.settings == settings.key else Hierarchy()
        self.vectors: dict[str, np.ndarray] = {}
        self.counts: Counter[str] = Counter()

    async def run(self) -> Hierarchy:
        nodes, edges = await in_thread(read_graph, self.context.store("graph"))
        await self._embed({i: entity_text(n.name, n.type, n.description) for i, n in nodes.items()})
        out = Hierarchy()
        out.settings = self.settings.key
        successor: dict[str, str] = {}  # a previous aggregate -> the one that continues its cluster now
        level = 0
        while len(nodes) > self.settings.top_layer_size and level < self.settings.max_levels:
            ids = sorted(nodes)
            previous = [(c["aggregate"], [successor.get(m, m) for m in c["members"]]) for c in self.previous.layers[level]] \
                if level < self.previous.levels else []
            assignment = assign(ids, np.stack([self.vectors[i] for i in ids]), previous, self.settings.cluster_size, self.settings.seed)
            if len(assignment.clusters) >= len(ids):
                break  # the layer would not shrink
            self._count_assignment(assignment)
            aggregates, successor = await self._aggregate_layer(level, assignment, nodes, edges, out)
            edges = await self._relate_layer(level, aggregates, edges, out)
            nodes = aggregates
            level += 1
        return out

    def _count_assignment(self, assignment: Assignment) -> None:
        self.counts["layers_clustered_afresh"] += int(assignment.fresh)
        self.counts["nodes_assigned"] += assignment.assigned
        self.counts["clusters_split"] += assignment.split

    async def _embed(self, texts: Mapping[str, str]) -> None:
        ids = sorted(texts)
        if not ids:
            return
        matrix = unit_rows(await embed_texts(self.context.embedding_model(), [texts[i] for i in ids], context=self.context))
        self.vectors.update(zip(ids, matrix))

    # --- aggregates -----------------------------------------------------------------------------

    async def _aggregate_layer(self, level: int, assignment: Assignment, nodes: Mapping[str, Node], edges: Sequence[Edge],
                               out: Hierarchy) -> tuple[dict[str, Node], dict[str, str]]:
        cluster_of = {m: index for index, (_, members) in enumerate(assignment.clusters) for m in members}
        internal: dict[int, list[Edge]] = {}
        for edge in edges:
            if cluster_of[edge.source] == cluster_of[edge.target]:
                internal.setdefault(cluster_of[edge.source], []).append(edge)
        planned = []
        successor: dict[str, str] = {}
        for index, (key, members) in enumerate(assignment.clusters):
            aggregate_id = "la" + content_hash(level + 1, sorted(members))[:20]
            if key is not None and key != aggregate_id:
                successor[key] = aggregate_id
            self.counts["clusters_kept"] += int(key == aggregate_id)
            ordered = centrality(members, self.vectors)
            inside = sorted(internal.get(index, []), key=lambda e: e.id)
            digest = content_hash(level + 1, [(m, nodes[m].name, nodes[m].description) for m in sorted(members)],
                                  [(e.id, e.text) for e in inside])
            planned.append((aggregate_id, ordered, inside, digest))

        records: dict[str, dict[str, Any]] = {}
        todo = []
        for aggregate_id, ordered, inside, digest in planned:
            old = self.previous.aggregates.get(aggregate_id)
            if old is not None and old["content_hash"] == digest and (old["origin"] != "extractive" or self.llm is None):
                records[aggregate_id] = {key: old[key] for key in ("name", "description", "findings", "origin", "headline")}
                self.counts["aggregates_reused"] += 1
            else:
                todo.append((aggregate_id, ordered, inside, digest))
        records.update(await self._summarise(nodes, todo))

        made: dict[str, Node] = {}
        layer = []
        for aggregate_id, ordered, inside, digest in planned:
            record = records[aggregate_id]
            documents = _union([*(nodes[m].documents for m in ordered), *(e.documents for e in inside)])
            support: Counter[str] = Counter()
            for m in ordered:
                support.update(nodes[m].chunks)
            leaf_count = sum(nodes[m].leaf_count for m in ordered)
            text = summaries.aggregate_text(record["name"], record["description"])
            out.aggregates[aggregate_id] = {
                "level": level + 1, "name": record["name"], "description": record["description"], "findings": record["findings"],
                "members": ordered, "parent": None, "documents": sorted(documents), "chunk_ids": top_chunks(support),
                "leaf_count": leaf_count, "content_hash": digest, "text_hash": content_hash(text)[:16], "origin": record["origin"],
                "headline": record["headline"],
            }
            for member in ordered:
                if level == 0:
                    out.parents[member] = aggregate_id
                else:
                    out.aggregates[member]["parent"] = aggregate_id
            layer.append({"aggregate": aggregate_id, "members": sorted(ordered)})
            made[aggregate_id] = Node(aggregate_id, level + 1, record["name"], record["description"], "aggregate", documents,
                                      dict(support), leaf_count, record["headline"])
        out.layers.append(layer)
        await self._embed({i: summaries.aggregate_text(n.name, n.description) for i, n in made.items()})
        return made, successor

    async def _summarise(self, nodes: Mapping[str, Node], todo: Sequence[tuple[str, list[str], list[Edge], str]]) -> dict[str, dict[str, Any]]:
        outcomes: dict[int, Any] = {}
        subjects = [summaries.aggregate_subject([(nodes[m].name, nodes[m].description) for m in ordered], [e.line for e in inside])
                    for _, ordered, inside, _ in todo]
        if self.llm is not None and todo:
            requests = [
                JsonRequest("leanrag_aggregate", digest + "\n" + subject, summaries.aggregate_messages(subject), summaries.AGGREGATE_SCHEMA,
                            summaries.AggregateCheck([nodes[m].name for m in ordered]))
                for (_, ordered, _, digest), subject in zip(todo, subjects)
            ]
            outcomes = dict(enumerate(await ask_json(self.context, self.llm, requests, cache=StateLlmCache(self.context.cache(LLM_CACHE_NAME)))))
        made = {}
        for index, (aggregate_id, ordered, _, _) in enumerate(todo):
            outcome = outcomes.get(index)
            if outcome is not None and outcome.status == "valid":
                summary = summaries.model_aggregate(outcome.value)
                made[aggregate_id] = {**summary, "origin": "language_model", "headline": summary["name"]}
                continue
            origin = "extractive"
            if outcome is not None:
                origin = "extractive_fallback" if outcome.status == "invalid" else "extractive"
                self._note_model_problem("aggregate", aggregate_id, outcome, "an aggregate's summary")
            summary = summaries.extractive_aggregate((nodes[m].headline, nodes[m].description) for m in ordered)
            made[aggregate_id] = {**summary, "origin": origin, "headline": nodes[ordered[0]].headline}
        self.counts["aggregates_made"] += len(made)
        return made

    # --- relations between aggregates ---------------------------------------------------------------

    async def _relate_layer(self, level: int, aggregates: Mapping[str, Node], edges: Sequence[Edge], out: Hierarchy) -> list[Edge]:
        parent_of = {m: a for a in aggregates for m in out.aggregates[a]["members"]}
        crossing: dict[tuple[str, str], list[Edge]] = {}
        for edge in edges:
            a, b = parent_of[edge.source], parent_of[edge.target]
            if a != b:
                crossing.setdefault((min(a, b), max(a, b)), []).append(edge)
        planned = []
        for (a, b), group in sorted(crossing.items()):
            group.sort(key=lambda e: e.id)
            relation_id = "lr" + content_hash(level + 1, a, b)[:20]
            ends = [(aggregates[x].name, aggregates[x].description) for x in (a, b)]
            digest = content_hash(level + 1, a, b, ends, [(e.id, e.text) for e in group])
            wants_model = self.llm is not None and len(group) >= self.settings.relation_model_threshold
            planned.append((relation_id, a, b, group, digest, wants_model))

        records: dict[str, tuple[str, str]] = {}
        asked = []
        for relation_id, a, b, group, digest, wants_model in planned:
            old = self.previous.relations.get(relation_id)
            if old is not None and old["content_hash"] == digest and (old["origin"] != "extractive" or not wants_model):
                records[relation_id] = (old["description"], old["origin"])
                self.counts["relations_reused"] += 1
            elif wants_model:
                asked.append((relation_id, a, b, group, digest))
            else:
                records[relation_id] = (summaries.extractive_relation(e.text for e in group), "extractive")
                self.counts["relations_made"] += 1
        records.update(await self._describe(aggregates, asked))

        made = []
        for relation_id, a, b, group, digest, _ in planned:
            description, origin = records[relation_id]
            documents = _union(e.documents for e in group)
            if origin == "language_model":  # written from the two aggregates' summaries as well
                documents |= aggregates[a].documents | aggregates[b].documents
            support = Counter(c for e in group for c in e.chunk_ids)
            base_ids = sorted({r for e in group for r in e.base_relation_ids})
            out.relations[relation_id] = {
                "level": level + 1, "source": a, "target": b, "description": description, "documents": sorted(documents),
                "base_relation_ids": base_ids, "chunk_ids": [c for c, _ in top_chunks(support)], "edge_count": len(group),
                "content_hash": digest, "origin": origin,
            }
            line = f"{aggregates[a].name} —related to→ {aggregates[b].name}: {description}"
            made.append(Edge(relation_id, a, b, line, description, documents, tuple(base_ids), tuple(c for c, _ in top_chunks(support))))
        return made

    async def _describe(self, aggregates: Mapping[str, Node], asked: Sequence[tuple[str, str, str, list[Edge], str]]) -> dict[str, tuple[str, str]]:
        if not asked:
            return {}
        assert self.llm is not None
        subjects = [summaries.relation_subject((aggregates[a].name, aggregates[a].description), (aggregates[b].name, aggregates[b].description),
                                               [e.line for e in group]) for _, a, b, group, _ in asked]
        requests = [JsonRequest("leanrag_relation", digest + "\n" + subject, summaries.relation_messages(subject), summaries.RELATION_SCHEMA,
                                summaries.relation_problem) for (_, _, _, _, digest), subject in zip(asked, subjects)]
        outcomes = await ask_json(self.context, self.llm, requests, cache=StateLlmCache(self.context.cache(LLM_CACHE_NAME)))
        made = {}
        for (relation_id, _, _, group, _), outcome in zip(asked, outcomes):
            if outcome.status == "valid":
                made[relation_id] = (outcome.value["description"].strip(), "language_model")
                continue
            self._note_model_problem("aggregate_relation", relation_id, outcome, "a relation between aggregates")
            made[relation_id] = (summaries.extractive_relation(e.text for e in group),
                                 "extractive_fallback" if outcome.status == "invalid" else "extractive")
        self.counts["relations_made"] += len(made)
        return made

    def _note_model_problem(self, kind: str, subject_id: str, outcome: Any, what: str) -> None:
        code_kind = "summary" if kind == "aggregate" else "relation"
        if outcome.status == "invalid":
            self.context.report(
                f"leanrag_{code_kind}_invalid",
                f"The language model's answer for {what} ({subject_id}) stayed invalid after {outcome.attempts} tries: {outcome.error[:200]}",
                subject=(kind, subject_id), action="wrote_extractive_summary",
                outcome="It is extractive; the invalid answer is cached, so rebuilds do not ask again.",
                details={"attempt_count": outcome.attempts},
            )
        else:
            self.context.report(
                f"leanrag_{code_kind}_failed",
                f"The language model could not be reached for {what} ({subject_id}) after retries: {outcome.error[:200]}",
                subject=(kind, subject_id), action="wrote_extractive_summary",
                outcome="It is extractive; the next build asks the model again.",
                details={"attempt_count": outcome.attempts},
            )
