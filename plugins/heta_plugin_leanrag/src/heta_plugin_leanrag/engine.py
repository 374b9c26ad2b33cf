"""``lean_rag_query``: LeanRAG's bottom-up retrieval over the hierarchy ``leanrag_aggregate`` built.

1. Match the query against the nodes of ``level_mode``: base entities (the graph's entity vectors),
   aggregates (this plugin's vectors) or both; keep the best ``entity_top_k``.
2. Follow each match's chain of parents. For every two matches, the reasoning path is the one chain up
   to their lowest common ancestor and the other chain down from it (the whole two chains when they
   do not meet); one match alone has its whole chain.
3. The relations between nodes of each path: base relations between two base entities, relations
   between aggregates (those the build made from the relations crossing their clusters), the best
   ``max_relations``.
4. Evidence chunks for each, most relevant to the query first.

Results, best first: the matches (score: cosine similarity), the aggregates on the paths (the best
score of a match below them, less 0.05 per level climbed), and the relations (the lower score of
their two ends, less 0.05); each with ``evidence`` chunks (provenance) and ``metadata["document_ids"]``.
``metadata["context"]`` is LeanRAG's context (entities, aggregates, reasoning-path relations, text
units), ``metadata["paths"]`` the reasoning paths as result ids.

Access (docs/security.md, ``reading``): the caller's documents are pushed into both vector searches
(the graph's entity filter, the ids of the aggregates they may read whole); what is shown rests
only on them, rebuilt from them where an aggregate or relation also rests on other documents. A
partly readable aggregate above one of the readable entities nearest the query is matched by its
rebuilt text (embedded then, one call for all of them), never by its stored vector.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any, ClassVar

import numpy as np
from heta_framework.kb.query_input import matches_filters
from heta_framework.kb.query_options import query_options
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAssetRef, query_issue
from heta_framework.kb.steps import model_ref
from heta_plugin_graph.engine import lexical_relevance, relevance_terms
from heta_plugin_graph.vectors import ENTITY_COLLECTION
from heta_plugin_graph.visibility import fact_visibility

from heta_plugin_leanrag import persist
from heta_plugin_leanrag.clustering import unit_rows
from heta_plugin_leanrag.options import AGGREGATES, BASE_LEVEL, LeanRagOptions
from heta_plugin_leanrag.reading import Reading, Shown
from heta_plugin_leanrag.summaries import aggregate_text

HIERARCHY = SearchAssetRef(kind=persist.ASSET_KIND)
GRAPH_TABLES = SearchAssetRef(kind="graph_tables")
GRAPH_VECTORS = SearchAssetRef(kind="graph_vector_index")
EMBEDDING = model_ref("embedding")
#: a parent scores this much less than the match below it, per level climbed; a relation this much less than its lower end
ANCESTOR_STEP = 0.05
RELATION_STEP = 0.05
#: document ids listed per result at most (``document_count`` has them all)
DOCUMENTS_LISTED = 50

#: parsed hierarchies by the SHA-256 of the stored JSON: a query hashes bytes instead of parsing again
_PARSED: OrderedDict[str, persist.Hierarchy] = OrderedDict()
_PARSED_KEPT = 4


def load_parsed(objects: Any) -> persist.Hierarchy:
    if not objects.exists(persist.HIERARCHY_KEY):
        return persist.Hierarchy()
    raw = objects.get_bytes(persist.HIERARCHY_KEY)
    digest = hashlib.sha256(raw).hexdigest()
    if digest in _PARSED:
        _PARSED.move_to_end(digest)
        return _PARSED[digest]
    hierarchy = persist.Hierarchy(json.loads(raw))
    _PARSED[digest] = hierarchy
    while len(_PARSED) > _PARSED_KEPT:
        _PARSED.popitem(last=False)
    return hierarchy


def join_chains(left: Sequence[str], right: Sequence[str]) -> list[str]:
    """The path from ``left[0]`` up to the lowest common ancestor and down to ``right[0]`` (both chains if none)."""
    position = {node: i for i, node in enumerate(right)}
    for i, node in enumerate(left):
        if node in position:
            return [*left[: i + 1], *reversed(right[: position[node]])]
    return [*left, *reversed(right)]


def _result_id(shown: Shown) -> str:
    return f"{shown.kind}:{shown.id}"


class LeanRagQueryEngine:
    """Bottom-up retrieval: the nodes nearest the query, their parents up to where they meet, the relations between them."""

    mode: ClassVar[str] = persist.MODE
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({HIERARCHY, GRAPH_TABLES, GRAPH_VECTORS})
    required_components: ClassVar[frozenset] = frozenset({EMBEDDING})
    options_type: ClassVar[type] = LeanRagOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: LeanRagOptions = query_options(self, request)
        asset, tables, index = context.find_asset(HIERARCHY), context.find_asset(GRAPH_TABLES), context.find_asset(GRAPH_VECTORS)
        objects = context.get_component(asset.store if asset else "stores.objects")
        graph = context.get_component(tables.store if tables else "stores.graph")
        vector_store = context.get_component(index.store if index else "stores.vector")
        entity_collection = dict((index.metadata if index else {}).get("collections") or {}).get("entities", ENTITY_COLLECTION)
        aggregate_collection = dict((asset.metadata if asset else {}).get("vectors") or {}).get("collection", persist.AGGREGATE_COLLECTION)
        hierarchy = await asyncio.to_thread(load_parsed, objects)
        query_vector = unit_rows(np.asarray(await context.embed_query(request.text), dtype=np.float32).reshape(1, -1))
        reading = Reading(graph, hierarchy, request)
        found, rebuilt = await asyncio.to_thread(self._match, request, options, graph, vector_store, entity_collection, aggregate_collection,
                                                 hierarchy, reading, query_vector)
        if rebuilt:  # partly readable aggregates are matched by what they say to this caller, embedded now
            texts = [aggregate_text(s.name, s.description) for s in rebuilt]
            vectors = unit_rows(np.asarray(await context.get_component(EMBEDDING.key).embed(texts), dtype=np.float32))
            found += [(s.id, float(v @ query_vector[0]), s) for s, v in zip(rebuilt, vectors)]
            found = sorted(found, key=lambda item: (-item[1], item[0]))[: options.entity_top_k]
        return await asyncio.to_thread(self._query, request, options, graph, vector_store, entity_collection, hierarchy, reading, found)

    def _query(self, request: QueryRequest, options: LeanRagOptions, graph: Any, vector_store: Any, entity_collection: str,
               hierarchy: persist.Hierarchy, reading: Reading, found: list[tuple[str, float, Shown]]) -> QueryResponse:
        metadata: dict[str, Any] = {"level_mode": options.level_mode, "levels": hierarchy.levels}
        if not found:
            if options.level_mode == AGGREGATES and not hierarchy.aggregates:
                metadata["issues"] = [query_issue("leanrag_no_aggregates", "The hierarchy has no aggregates (too few entities).", "returned_nothing")]
            elif not vector_store.has_collection(entity_collection):
                metadata["issues"] = [query_issue("empty_graph", "The graph has no entity vectors yet.", "returned_nothing")]
            return QueryResponse(metadata={**metadata, "hits": [], "paths": []})

        chains = {node_id: hierarchy.chain(node_id) for node_id, _, _ in found}
        hit_ids = [node_id for node_id, _, _ in found]
        paths = [chains[hit_ids[0]]] if len(hit_ids) == 1 else [join_chains(chains[a], chains[b]) for a, b in combinations(hit_ids, 2)]
        score: dict[str, float] = {}
        for node_id, similarity, _ in found:
            for climbed, node in enumerate(chains[node_id]):
                score[node] = max(score.get(node, -np.inf), similarity - ANCESTOR_STEP * climbed)
        shown: dict[str, Shown] = {s.id: s for _, _, s in found}
        for node in dict.fromkeys(n for path in paths for n in path):
            if node not in shown and (node_shown := reading.node(node)) is not None:
                shown[node] = node_shown
        relations = self._relations(graph, hierarchy, reading, paths, score, shown, options)

        scored = [(score[s.id], s) for s in shown.values()] + relations
        results, chunk_rows = self._results(graph, request, options, reading, scored, {node_id for node_id, _, _ in found})
        results.sort(key=lambda r: (-r.score, r.id))
        kept_ids = {r.id for r in results}
        metadata.update(
            hits=[{"id": _result_id(s), "score": round(similarity, 6)} for _, similarity, s in found],
            paths=[list(p) for p in dict.fromkeys(tuple(_result_id(shown[n]) for n in path if n in shown) for path in paths)
                   if all(i in kept_ids for i in p)],
            **self._context(found, shown, relations, chunk_rows, options),
        )
        return QueryResponse(results=results[: request.top_k], metadata=metadata)

    # --- 1. matches ----------------------------------------------------------------------------

    def _match(self, request: QueryRequest, options: LeanRagOptions, graph: Any, vector_store: Any, entity_collection: str,
               aggregate_collection: str, hierarchy: persist.Hierarchy, reading: Reading,
               query_vector: np.ndarray) -> tuple[list[tuple[str, float, Shown]], list[Shown]]:
        """The best nodes of ``level_mode`` with their similarity, and the partly readable aggregates still to be scored."""
        wants_aggregates = options.level_mode != BASE_LEVEL and bool(hierarchy.aggregates)
        entity_hits: dict[str, float] = {}
        if (options.level_mode != AGGREGATES or (wants_aggregates and reading.narrowed)) and vector_store.has_collection(entity_collection):
            visible = fact_visibility(graph, request)  # the request's documents, pushed into the search
            if visible.entities is None or visible.entities:
                for hit in vector_store.collection(entity_collection).search(query_vector, options.entity_top_k, filters=visible.entity_filter)[0]:
                    entity_hits[hit.id] = float(hit.score)
        hits: dict[str, float] = dict(entity_hits) if options.level_mode != AGGREGATES else {}
        rebuilt: dict[str, Shown] = {}
        if wants_aggregates and vector_store.has_collection(aggregate_collection):
            whole = reading.whole_aggregates()  # an aggregate's vector says all it rests on: matched only if all may be read
            if whole is None or whole:
                filters = None if whole is None else {"id": whole}
                for hit in vector_store.collection(aggregate_collection).search(query_vector, options.entity_top_k, filters=filters)[0]:
                    if hit.id in hierarchy.aggregates:
                        hits[hit.id] = float(hit.score)
            if whole is not None:
                # the partly readable aggregates above the readable entities nearest the query, rebuilt for this caller
                allowed = set(whole)
                for entity_id in entity_hits:
                    for ancestor in hierarchy.chain(entity_id)[1:]:
                        if ancestor not in allowed and ancestor not in rebuilt and (shown := reading.aggregate(ancestor)) is not None:
                            rebuilt[ancestor] = shown
        found = []
        for node_id, similarity in sorted(hits.items(), key=lambda item: (-item[1], item[0])):
            if (node := reading.node(node_id)) is not None:  # a store that could not narrow the search: checked here
                found.append((node_id, similarity, node))
                if len(found) == options.entity_top_k:
                    break
        return found, list(rebuilt.values())

    # --- 3. relations along the paths -------------------------------------------------------------------

    def _relations(self, graph: Any, hierarchy: persist.Hierarchy, reading: Reading, paths: Sequence[Sequence[str]],
                   score: Mapping[str, float], shown: Mapping[str, Shown], options: LeanRagOptions) -> list[tuple[float, Shown]]:
        base = [n for n in shown if n not in hierarchy.aggregates]
        between: dict[tuple[str, str], list[str]] = {}
        if len(base) > 1:
            members = set(base)
            for relation in graph.relations_touching(base):
                if relation.source_id in members and relation.target_id in members and relation.source_id != relation.target_id:
                    pair = (min(relation.source_id, relation.target_id), max(relation.source_id, relation.target_id))
                    between.setdefault(pair, []).append(relation.id)
        candidates: dict[tuple[str, str], float] = {}
        for path in paths:
            for u, v in combinations([n for n in dict.fromkeys(path) if n in shown], 2):
                pair = (min(u, v), max(u, v))
                value = min(score[u], score[v]) - RELATION_STEP
                if u in hierarchy.aggregates and v in hierarchy.aggregates:
                    if (relation_id := hierarchy.relation_between(u, v)) is not None:
                        candidates[("aggregate_relation", relation_id)] = max(candidates.get(("aggregate_relation", relation_id), -np.inf), value)
                else:
                    for relation_id in between.get(pair, []):
                        candidates[("relation", relation_id)] = max(candidates.get(("relation", relation_id), -np.inf), value)
        names = {node_id: s.name for node_id, s in shown.items()}
        kept: list[tuple[float, Shown]] = []
        for (kind, relation_id), value in sorted(candidates.items(), key=lambda item: (-item[1], item[0])):
            if len(kept) == options.max_relations:
                break
            relation = reading.aggregate_relation(relation_id) if kind == "aggregate_relation" else reading.relation(relation_id, names)
            if relation is not None:
                kept.append((value, relation))
        return kept

    # --- 4. results with evidence -----------------------------------------------------------------------

    def _results(self, graph: Any, request: QueryRequest, options: LeanRagOptions, reading: Reading, scored: Sequence[tuple[float, Shown]],
                 hit_ids: set[str]) -> tuple[list[QueryResult], dict[str, list[Any]]]:
        chunks = graph.get_chunks(list(dict.fromkeys(c for _, s in scored for c in s.chunk_ids)))
        passing = {
            chunk_id: chunk for chunk_id, chunk in chunks.items()
            if reading.allows(chunk.document_id) and matches_filters({**dict(chunk.metadata), "document_id": chunk.document_id}, request.filters)
        }
        terms = relevance_terms(request.text)
        relevance = {chunk_id: lexical_relevance(terms, chunk.text) for chunk_id, chunk in passing.items()}
        narrowing_chunks = any(key != "document_id" for key in request.filters)
        results: list[QueryResult] = []
        rows: dict[str, list[Any]] = {}
        for value, s in scored:
            present = [c for c in s.chunk_ids if c in passing]
            if narrowing_chunks and not present:
                continue  # the filters name chunk metadata: a result none of whose evidence passes them is left out
            rows[s.id] = present
            ranked = sorted(range(len(present)), key=lambda i: (-relevance[present[i]], i))[: options.max_evidence]
            result_id = _result_id(s)
            evidence = tuple(
                QueryResult(id=present[i], text=passing[present[i]].text, score=relevance[present[i]], kind="chunk",
                            metadata={**dict(passing[present[i]].metadata), "document_id": passing[present[i]].document_id,
                                      "evidence_for": result_id}, sources=(self.mode,))
                for i in ranked
            )
            results.append(QueryResult(id=result_id, text=_text(s), score=float(value), kind=s.kind,
                                       metadata=_metadata(s, s.id in hit_ids), evidence=evidence, sources=(self.mode,)))
        return results, rows

    def _context(self, found: Sequence[tuple[str, float, Shown]], shown: Mapping[str, Shown], relations: Sequence[tuple[float, Shown]],
                 chunk_rows: Mapping[str, list[str]], options: LeanRagOptions) -> dict[str, Any]:
        """LeanRAG's context for a language model: entities, aggregates on the paths, path relations, text units."""
        support = Counter(c for node_id, _, _ in found for c in chunk_rows.get(node_id, []))
        order = list(dict.fromkeys(c for node_id, _, _ in found for c in chunk_rows.get(node_id, [])))
        units = [c for c in sorted(order, key=lambda c: -support[c]) if support[c] > 1][: options.text_unit_k]
        units += [c for c in order if c not in units][: options.text_unit_k - len(units)]
        aggregates = [s for s in shown.values() if s.kind == "aggregate" and s.id in chunk_rows]
        lines = ["entity_information:"] + [f"{s.name}\t{s.description}" for _, _, s in found if s.id in chunk_rows]
        lines += ["aggregation_entity_information:"] + [f"{s.name}\t{s.description}" for s in aggregates]
        lines += ["reasoning_path_information:"] + [_text(s) for _, s in relations if s.id in chunk_rows]
        lines += ["text_units:"] + [f"[{c}]" for c in units]
        return {"context": "\n".join(lines), "text_units": units,
                "counts": {"hits": len(found), "aggregates": len(aggregates), "relations": len(relations), "text_units": len(units)}}


def _text(s: Shown) -> str:
    if s.kind in ("relation", "aggregate_relation"):
        head = f"{s.source} —{s.relation_name}→ {s.target}"
        return f"{head}: {s.description}" if s.description else head
    if s.kind == "entity":
        return f"{s.name} ({s.entity_type}): {s.description}" if s.description else f"{s.name} ({s.entity_type})"
    return f"{s.name}: {s.description}" if s.description else s.name


def _metadata(s: Shown, matched: bool) -> dict[str, Any]:
    common = {"level": s.level, "description": s.description, "document_ids": list(s.document_ids[:DOCUMENTS_LISTED]),
              "document_count": len(s.document_ids), "matched": matched}
    if s.kind == "entity":
        return {**common, "entity_id": s.id, "name": s.name, "type": s.entity_type, "attributes": s.attributes, "aliases": list(s.aliases)}
    if s.kind == "aggregate":
        return {**common, "aggregate_id": s.id, "name": s.name, "findings": [dict(f) for f in s.findings], "members": list(s.members),
                "origin": s.origin}
    return {**common, "relation_id": s.id, "name": s.relation_name, "source": s.source, "target": s.target, "origin": s.origin}
