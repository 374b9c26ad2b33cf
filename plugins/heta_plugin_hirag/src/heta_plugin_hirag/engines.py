"""The five hi_rag modes: one retrieval, five views of it (HiRAG's branches).

1. Entities: the graph's entities nearest the query (its entity vector index) and the
   summary entities nearest it (``hirag_summary_entities``), merged by similarity, best
   ``entity_top_k``.
2. Communities: the reports of the communities (level <= ``level``) that hold the most of
   those entities, then the best rated, within ``max_token_for_community_report``.
3. Relations: the graph's relations touching the chosen graph entities, those among them
   first, within ``max_token_for_local_context`` (with the entities).
4. Reasoning path: the chosen communities of each level chained in order, each link the
   bridge ``hirag_bridges`` found between them, within ``max_token_for_bridge_knowledge``.
5. Sources: the chunks that are evidence of the chosen graph entities, then the chunks of
   the chosen reports, then those of the path (in the modes that show them), within
   ``max_token_for_text_unit``.

==========================  =========================================================
``hi_rag_query``            reports, reasoning path, entities, sources
``hi_rag_nobridge_query``   reports, entities, relations, sources
``hi_rag_local_query``      entities, relations, sources
``hi_rag_global_query``     reports, sources
``hi_rag_bridge_query``     reasoning path, sources
==========================  =========================================================

Results are the sources, as ``chunk`` results with their document's id; the entities,
relations, reports and path are in ``metadata`` (each with the ``document_ids`` it rests
on), and ``metadata["context"]`` is HiRAG's context text for a language model. With
``llm_answer`` and a language model in the recipe, ``metadata["answer"]`` is its answer.

Access (docs/security.md): graph entities and relations follow the graph modes' rule
(``fact_visibility``: only facts with readable evidence, described from it). A summary
entity, a report and a bridge are used only when the caller may read every document they
rest on (and, under a ``document_id`` filter, every one is in it): each is written from all
of them, so none is shown in part.
"""

from __future__ import annotations

import asyncio
import csv
import io
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
from heta_framework.builtin.text_split import count_tokens
from heta_framework.common.models import Message
from heta_framework.kb.access import AccessScope
from heta_framework.kb.query_input import matches_filters
from heta_framework.kb.query_options import query_options
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAssetRef, query_issue
from heta_framework.kb.steps import model_ref
from heta_plugin_graph.vectors import ENTITY_COLLECTION
from heta_plugin_graph.visibility import FactVisibility, fact_visibility
from heta_plugin_graphrag.reports import report_text

from heta_plugin_hirag import persist
from heta_plugin_hirag.hierarchy import Hierarchy, SummaryEntity
from heta_plugin_hirag.layered import is_member_edge, is_summary
from heta_plugin_hirag.options import HiRagOptions

GRAPH_TABLES = SearchAssetRef(kind="graph_tables")
GRAPH_VECTORS = SearchAssetRef(kind="graph_vector_index")
HIERARCHY = SearchAssetRef(kind=persist.HIERARCHY_ASSET.kind)
REPORTS = SearchAssetRef(kind=persist.REPORTS_ASSET.kind)
BRIDGES = SearchAssetRef(kind=persist.BRIDGES_ASSET.kind)
EMBEDDING = model_ref("embedding")
LANGUAGE_KEY = "models.language"
ANSWER_TIMEOUT = 120.0
#: chunks read from the graph at a time while the sources fill up
CHUNK_BATCH = 100

ANSWER_PROMPT = (
    "You are a helpful assistant answering questions from HiRAG retrieval context.\n\n"
    "Use only the context data below to answer. If the context does not contain enough information, say that the "
    "available context is insufficient. Do not invent facts.\n\nResponse type: {response_type}\n\nContext data:\n{context}"
)


@attrs.frozen
class DerivedAccess:
    """Whether something derived from several documents may be shown: the caller reads all of them, the filter keeps all."""

    scope: AccessScope | None
    wanted: frozenset[str] | None

    def allows(self, documents: Iterable[str]) -> bool:
        if self.scope is None and self.wanted is None:
            return True
        documents = list(documents)
        if self.scope is not None and not self.scope.allows_all(documents):
            return False
        return self.wanted is None or all(d in self.wanted for d in documents)


def derived_access(request: QueryRequest) -> DerivedAccess:
    scope = request.access if request.access is not None and request.access.restricted else None
    wanted = request.filters.get("document_id")
    if wanted is None:
        return DerivedAccess(scope, None)
    return DerivedAccess(scope, frozenset(wanted) if isinstance(wanted, (list, tuple, set, frozenset)) else frozenset([wanted]))


def _chunk_passes(chunk: Any, filters: Mapping[str, Any]) -> bool:
    return matches_filters({**chunk.metadata, "document_id": chunk.document_id}, filters)


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().strip()


def _load_summaries(data: Any) -> dict[str, SummaryEntity]:
    return Hierarchy.from_json(data).summaries()


def _load_reports(data: Any) -> dict[str, Any]:
    return dict((data or {}).get("reports", {}))


def _load_bridges(data: Any) -> dict[str, Any]:
    return dict(data or {})


@attrs.frozen
class Picked:
    """What one query picked, every part already narrowed to what the caller may see."""

    entities: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    reports: list[dict[str, Any]]
    path: list[dict[str, Any]]
    sources: list[QueryResult]


class HiRagEngine:
    """HiRAG's retrieval; ``sections`` say which parts a mode shows (and draws sources from)."""

    mode: ClassVar[str] = ""
    sections: ClassVar[tuple[str, ...]] = ()
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset()
    required_components: ClassVar[frozenset] = frozenset({EMBEDDING})
    options_type: ClassVar[type] = HiRagOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: HiRagOptions = query_options(self, request)
        tables, index = context.find_asset(GRAPH_TABLES), context.find_asset(GRAPH_VECTORS)
        hierarchy_asset = context.find_asset(HIERARCHY)
        graph = context.get_component(tables.store if tables else "stores.graph")
        vector_store = context.get_component(index.store if index else "stores.vector")
        objects = context.get_component(hierarchy_asset.store if hierarchy_asset else "stores.objects")
        entity_name = dict((index.metadata if index else {}).get("collections") or {}).get("entities", ENTITY_COLLECTION)
        query_vector = np.asarray(await context.embed_query(request.text), dtype=np.float32).reshape(1, -1)
        picked, issues = await asyncio.to_thread(self._pick, request, options, graph, vector_store, objects, entity_name, query_vector)
        context_text = self._context(picked)
        metadata: dict[str, Any] = {"entity_count": len(picked.entities), "community_count": len(picked.reports),
                                    "relation_count": len(picked.relations), "reasoning_path_count": len(picked.path),
                                    "source_count": len(picked.sources), "context": context_text}
        for section, key, value in (("entities", "entities", picked.entities), ("relations", "relations", picked.relations),
                                    ("reports", "reports", picked.reports), ("path", "reasoning_path", picked.path)):
            if section in self.sections:
                metadata[key] = value
        if picked.entities or picked.sources:
            issues += await self._answer(context, request, options, context_text, metadata)
        if issues:
            metadata["issues"] = issues
        return QueryResponse(results=picked.sources[: request.top_k], metadata=metadata)

    # --- picking ----------------------------------------------------------------------------------

    def _pick(self, request: QueryRequest, options: HiRagOptions, graph: Any, vector_store: Any, objects: Any, entity_name: str,
              query_vector: np.ndarray) -> tuple[Picked, list[dict[str, Any]]]:
        visible = fact_visibility(graph, request)
        access = derived_access(request)
        summaries = persist.load_parsed(objects, persist.HIERARCHY_KEY, _load_summaries)
        issues: list[dict[str, Any]] = []
        if not vector_store.has_collection(entity_name):
            issues.append(query_issue("empty_graph", "The graph has no entity vectors yet.", "returned_nothing"))
            return Picked([], [], [], [], []), issues
        entities, evidence = self._entities(graph, vector_store, entity_name, summaries, visible, access, options, query_vector)
        reports: list[dict[str, Any]] = []
        chosen_reports: list[tuple[str, dict[str, Any]]] = []
        if {"reports", "path"} & set(self.sections):
            stored = persist.load_parsed(objects, persist.REPORTS_KEY, _load_reports)
            chosen_reports = self._reports(stored, entities, access, options)
            if "reports" in self.sections:
                reports = [{"community_id": cid, "title": e["report"].get("title", ""), "level": e["level"],
                            "rating": e["report"].get("rating"), "report": report_text(e["report"]), "source": e["source"],
                            "document_ids": list(e["document_ids"])} for cid, e in chosen_reports]
        relations = self._relations(graph, entities, visible, options) if "relations" in self.sections else []
        path: list[dict[str, Any]] = []
        path_edges: list[str] = []
        if "path" in self.sections:
            bridges = persist.load_parsed(objects, persist.BRIDGES_KEY, _load_bridges)
            path, path_edges = self._path(graph, summaries, bridges, [cid for cid, _ in chosen_reports], access, options)
        extra: list[str] = []
        if "reports" in self.sections:
            extra += [c for _, e in chosen_reports for c in e.get("chunk_ids", ())]
        if path_edges:
            rows = graph.evidence("relation", [e for e in path_edges if not is_member_edge(e)])
            extra += [row[0] for edge in path_edges for row in rows.get(edge, ())]
        sources = self._sources(graph, entities, evidence, extra, visible, request, options)
        return Picked(entities, relations, reports, path, sources), issues

    def _entities(self, graph: Any, vector_store: Any, entity_name: str, summaries: Mapping[str, SummaryEntity],
                  visible: FactVisibility, access: DerivedAccess, options: HiRagOptions,
                  query_vector: np.ndarray) -> tuple[list[dict[str, Any]], dict[str, list[tuple[str, str, str]]]]:
        scored: list[tuple[float, str]] = []
        if visible.entities is None or visible.entities:
            hits = vector_store.collection(entity_name).search(query_vector, options.entity_top_k, filters=visible.entity_filter)[0]
            scored += [(float(h.score), h.id) for h in hits]
        readable = [sid for sid, s in summaries.items() if access.allows(s.document_ids)]
        if readable and vector_store.has_collection(persist.SUMMARY_COLLECTION):
            collection = vector_store.collection(persist.SUMMARY_COLLECTION)
            # the caller's summaries pushed into the search, so the top-k is theirs
            narrowed = None if len(readable) == len(summaries) else {"id": sorted(readable)}
            hits = collection.search(query_vector, options.entity_top_k, filters=narrowed)[0]
            allowed = set(readable)
            scored += [(float(h.score), h.id) for h in hits if h.id in allowed]
        scored.sort(key=lambda item: (-item[0], item[1]))
        base_ids = [i for _, i in scored if not is_summary(i)]
        stored = graph.get_entities(base_ids)
        evidence = graph.evidence("entity", base_ids)
        chosen: list[dict[str, Any]] = []
        for score, entity_id in scored:
            if len(chosen) >= options.entity_top_k:
                break
            if is_summary(entity_id):
                s = summaries[entity_id]
                chosen.append({"entity_id": s.id, "name": s.name, "type": s.type, "description": s.description, "layer": s.layer,
                               "score": round(score, 6), "document_ids": sorted(s.document_ids)})
                continue
            entity = stored.get(entity_id)
            rows = visible.readable_rows(evidence.get(entity_id, ()))
            if entity is None or not rows:  # gone, or a store that could not narrow the search to readable facts
                continue
            chosen.append({"entity_id": entity.id, "name": entity.name, "type": entity.type, "layer": 0, "score": round(score, 6),
                           "description": visible.description(entity.description, evidence.get(entity_id, [])),
                           "document_ids": sorted({row[1] for row in rows})})
        return chosen, {e: visible.readable_rows(rows) for e, rows in evidence.items()}

    def _reports(self, stored: Mapping[str, Any], entities: Sequence[Mapping[str, Any]], access: DerivedAccess,
                 options: HiRagOptions) -> list[tuple[str, dict[str, Any]]]:
        chosen_ids = {e["entity_id"] for e in entities}
        scored = []
        for cid, entry in stored.items():
            if entry["level"] > options.level:
                continue
            overlap = len(chosen_ids.intersection(entry["entity_ids"]))
            if overlap and access.allows(entry.get("document_ids", ("",))):
                scored.append((-overlap, -float(entry["report"].get("rating", 0) or 0), cid))
        kept, used = [], 0
        for _, _, cid in sorted(scored):
            tokens = count_tokens(report_text(stored[cid]["report"]))
            if kept and used + tokens > options.max_token_for_community_report:
                break
            kept.append((cid, stored[cid]))
            used += tokens
            if options.community_single_one:
                break
        return kept

    def _relations(self, graph: Any, entities: Sequence[Mapping[str, Any]], visible: FactVisibility,
                   options: HiRagOptions) -> list[dict[str, Any]]:
        chosen = [e["entity_id"] for e in entities if e["layer"] == 0]
        chosen_set = set(chosen)
        touching = [r for r in graph.relations_touching(chosen) if visible.allows_relation(r.id) and r.source_id != r.target_id]
        touching = list({r.id: r for r in touching}.values())
        evidence = graph.evidence("relation", [r.id for r in touching])
        touching = [r for r in touching if visible.readable_rows(evidence.get(r.id, ()))]
        degree = Counter(e for r in touching for e in (r.source_id, r.target_id))
        touching.sort(key=lambda r: (-((r.source_id in chosen_set) + (r.target_id in chosen_set)),
                                     -(degree[r.source_id] + degree[r.target_id]), r.id))
        names = {i: e.name for i, e in graph.get_entities(sorted({x for r in touching for x in (r.source_id, r.target_id)})).items()}
        budget = options.max_token_for_local_context - sum(count_tokens(f"{e['name']} {e['description']}") for e in entities)
        kept, used = [], 0
        for r in touching:
            rows = evidence.get(r.id, [])
            description = visible.description(r.description, rows)
            item = {"relation_id": r.id, "source": names.get(r.source_id, r.source_id), "target": names.get(r.target_id, r.target_id),
                    "name": r.name or r.type, "description": description,
                    "document_ids": sorted({row[1] for row in visible.readable_rows(rows)})}
            tokens = count_tokens(f"{item['source']} {item['name']} {item['target']} {description}")
            if used + tokens > budget:
                break
            kept.append(item)
            used += tokens
        return kept

    def _path(self, graph: Any, summaries: Mapping[str, SummaryEntity], bridges: Mapping[str, Any], communities: Sequence[str],
              access: DerivedAccess, options: HiRagOptions) -> tuple[list[dict[str, Any]], list[str]]:
        found = bridges.get("bridges", {})
        levels = bridges.get("levels", {})
        by_level: dict[int, list[str]] = {}
        for cid in communities:
            if cid in levels:
                by_level.setdefault(levels[cid], []).append(cid)
        links = []
        for level in sorted(by_level):
            chain = by_level[level]
            for a, b in zip(chain, chain[1:]):
                bridge = found.get(a, {}).get(b)
                if bridge is None and (back := found.get(b, {}).get(a)) is not None:
                    bridge = {"nodes": back["nodes"][::-1], "edges": back["edges"][::-1], "document_ids": back["document_ids"]}
                if bridge is not None and access.allows(bridge["document_ids"]):
                    links.append((a, b, bridge))
        base_nodes = sorted({n for _, _, br in links for n in br["nodes"] if not is_summary(n)})
        names = {i: e.name for i, e in graph.get_entities(base_nodes).items()}
        names.update({i: s.name for i, s in summaries.items()})
        relations = graph.get_relations(sorted({e for _, _, br in links for e in br["edges"] if not is_member_edge(e)}))
        path, edges_used, used = [], [], 0
        for a, b, bridge in links:
            steps = []
            for (source, target), edge in zip(zip(bridge["nodes"], bridge["nodes"][1:]), bridge["edges"]):
                relation = relations.get(edge)
                name = (relation.name or relation.type) if relation is not None else "member of"
                description = relation.description if relation is not None else ""
                steps.append({"relation_id": edge, "source": names.get(source, source), "target": names.get(target, target),
                              "name": name, "description": description})
            tokens = sum(count_tokens(f"{s['source']} {s['name']} {s['target']} {s['description']}") for s in steps)
            if path and used + tokens > options.max_token_for_bridge_knowledge:
                break
            path.append({"from_community": a, "to_community": b, "nodes": [names.get(n, n) for n in bridge["nodes"]], "edges": steps,
                         "document_ids": list(bridge["document_ids"])})
            edges_used += bridge["edges"]
            used += tokens
        return path, list(dict.fromkeys(edges_used))

    def _sources(self, graph: Any, entities: Sequence[Mapping[str, Any]], evidence: Mapping[str, list[tuple[str, str, str]]],
                 extra: Sequence[str], visible: FactVisibility, request: QueryRequest, options: HiRagOptions) -> list[QueryResult]:
        similarity = {e["entity_id"]: float(e["score"]) for e in entities if e["layer"] == 0}
        support: Counter[str] = Counter()
        weight: dict[str, float] = {}
        for entity_id, score in similarity.items():
            for chunk_id in {row[0] for row in evidence.get(entity_id, ())}:
                support[chunk_id] += 1
                weight[chunk_id] = weight.get(chunk_id, 0.0) + max(score, 0.0)
        # a chunk ranks by the similarity of all the chosen entities it is evidence of, summed: upstream HiRAG
        # takes chunks entity by entity, so one short generic name ranked first put all its chunks before the
        # chunk that supports five of the query's entities (bench/results/hierarchical.md)
        order = sorted(weight, key=lambda c: (-round(weight[c], 6), -support[c], c))
        order += [c for c in dict.fromkeys(extra) if c not in weight]
        results: list[QueryResult] = []
        used = 0
        for start in range(0, len(order), CHUNK_BATCH):
            batch = order[start: start + CHUNK_BATCH]
            chunks = graph.get_chunks(batch)
            for chunk_id in batch:
                chunk = chunks.get(chunk_id)
                if chunk is None or not _chunk_passes(chunk, request.filters) or (
                        visible.scope is not None and not visible.scope.allows(chunk.document_id)):
                    continue
                tokens = count_tokens(chunk.text)
                if results and used + tokens > options.max_token_for_text_unit:
                    return results
                used += tokens
                results.append(QueryResult(
                    id=chunk.id, text=chunk.text, score=round(1.0 / (len(results) + 1), 6), kind="chunk",
                    metadata={**dict(chunk.metadata), "document_id": chunk.document_id, "supports": support.get(chunk.id, 0)},
                    sources=(self.mode,),
                ))
                if len(results) >= request.top_k:
                    return results
        return results

    # --- the context and the answer -----------------------------------------------------------------

    def _context(self, picked: Picked) -> str:
        parts = {
            "reports": ("Backgrounds", _csv(["id", "content"], ((i, r["report"]) for i, r in enumerate(picked.reports)))),
            "path": ("Reasoning Path", _csv(["id", "source", "target", "relation", "description"],
                                            ((i, s["source"], s["target"], s["name"], s["description"])
                                             for i, s in enumerate(step for link in picked.path for step in link["edges"])))),
            "entities": ("Detail Entity Information" if "path" in self.sections else "Entities",
                         _csv(["id", "entity", "type", "description", "layer"],
                              ((i, e["name"], e["type"], e["description"], e["layer"]) for i, e in enumerate(picked.entities)))),
            "relations": ("Relationships", _csv(["id", "source", "target", "relation", "description"],
                                               ((i, r["source"], r["target"], r["name"], r["description"]) for i, r in enumerate(picked.relations)))),
            "sources": ("Source Documents", _csv(["id", "content"], ((i, s.text) for i, s in enumerate(picked.sources)))),
        }
        return "\n".join(f"-----{title}-----\n```csv\n{body}\n```" for title, body in (parts[s] for s in (*self.sections, "sources")))

    async def _answer(self, context: QueryContext, request: QueryRequest, options: HiRagOptions, context_text: str,
                      metadata: dict[str, Any]) -> list[dict[str, Any]]:
        if not options.llm_answer:
            return []
        if not context.has_component(LANGUAGE_KEY):
            return [query_issue("hirag_no_language_model", "The recipe has no language model: the context is returned without an answer.",
                                "returned_context_without_answer")]
        messages = [Message("system", ANSWER_PROMPT.format(response_type=options.response_type, context=context_text)),
                    Message("user", request.text)]
        try:
            completion = await asyncio.wait_for(context.get_component(LANGUAGE_KEY).complete(messages, temperature=0.0), ANSWER_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 — the context is still a useful answer
            return [query_issue("hirag_answer_failed", f"The language model could not answer ({type(exc).__name__}); the context is returned.",
                                "returned_context_without_answer")]
        metadata["answer"] = getattr(completion, "text", "") or ""
        return []


_GRAPH = frozenset({GRAPH_TABLES, GRAPH_VECTORS, HIERARCHY})


class HiRagQueryEngine(HiRagEngine):
    """Reports, the reasoning path across communities, entities and sources: HiRAG's full retrieval."""

    mode: ClassVar[str] = persist.HI_MODE
    sections: ClassVar[tuple[str, ...]] = ("reports", "path", "entities")
    required_assets: ClassVar[frozenset[SearchAssetRef]] = _GRAPH | {REPORTS, BRIDGES}


class HiRagNobridgeQueryEngine(HiRagEngine):
    """Reports, entities, relations and sources, without the path."""

    mode: ClassVar[str] = persist.NOBRIDGE_MODE
    sections: ClassVar[tuple[str, ...]] = ("reports", "entities", "relations")
    required_assets: ClassVar[frozenset[SearchAssetRef]] = _GRAPH | {REPORTS}


class HiRagLocalQueryEngine(HiRagEngine):
    """Entities (summary entities too), relations and sources."""

    mode: ClassVar[str] = persist.LOCAL_MODE
    sections: ClassVar[tuple[str, ...]] = ("entities", "relations")
    required_assets: ClassVar[frozenset[SearchAssetRef]] = _GRAPH


class HiRagGlobalQueryEngine(HiRagEngine):
    """Community reports and sources."""

    mode: ClassVar[str] = persist.GLOBAL_MODE
    sections: ClassVar[tuple[str, ...]] = ("reports",)
    required_assets: ClassVar[frozenset[SearchAssetRef]] = _GRAPH | {REPORTS}


class HiRagBridgeQueryEngine(HiRagEngine):
    """The reasoning path across communities and sources."""

    mode: ClassVar[str] = persist.BRIDGE_MODE
    sections: ClassVar[tuple[str, ...]] = ("path",)
    required_assets: ClassVar[frozenset[SearchAssetRef]] = _GRAPH | {REPORTS, BRIDGES}


ENGINES = (HiRagQueryEngine, HiRagNobridgeQueryEngine, HiRagLocalQueryEngine, HiRagGlobalQueryEngine, HiRagBridgeQueryEngine)
