"""``graphrag_global_search`` and ``graphrag_local_search`` over the reports ``community_reports`` built.

Global (sensemaking questions: "what are the main themes of ..."):
  map     every report (of ``level``, if set) is rated against the query: the
          cosine of the query and the report vector plus the share of the
          query's words the report contains (offline; no call per report);
  reduce  the best, within ``report_top_k`` and ``max_report_tokens``;
  answer  with the recipe's language model (one call over the kept reports),
          in ``metadata["answer"]``; without one the reports are the answer.
  Results are the kept reports' supporting chunks (provenance, ``community_id``,
  ``report_title``), best report first, each report's chunks ordered by the
  query words they share.
Local (questions about named things): the entities nearest the query (entity
  vector index), their relations, the reports of the communities they are in,
  and their evidence chunks (text units), each within its share of ``max_tokens``.
  Results are the text units, ranked by how many of the chosen entities they support.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import Counter, OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
from heta_framework.builtin.text_split import count_tokens
from heta_framework.common.models import Message
from heta_framework.kb.query_input import matches_filters
from heta_framework.kb.query_options import query_options
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAssetRef, query_issue
from heta_framework.kb.steps import model_ref
from heta_plugin_graph.vectors import ENTITY_COLLECTION
from heta_plugin_graph.visibility import fact_visibility

from heta_plugin_graphrag import persist
from heta_plugin_graphrag.options import GlobalSearchOptions, LocalSearchOptions
from heta_plugin_graphrag.reports import report_text

REPORTS = SearchAssetRef(kind="graphrag_community_reports")
GRAPH_TABLES = SearchAssetRef(kind="graph_tables")
GRAPH_VECTORS = SearchAssetRef(kind="graph_vector_index")
EMBEDDING = model_ref("embedding")
LANGUAGE_KEY = "models.language"
ANSWER_TIMEOUT = 120.0
_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text) if len(w) > 2 or not w.isascii()}


@attrs.define
class ParsedReports:
    """The community reports of one build: parsed, each report's words, and (once asked) the documents each rests on."""

    reports: dict[str, Any]
    words: dict[str, frozenset[str]]
    documents: dict[str, frozenset[str]] | None = None

    def documents_of(self, graph: Any) -> dict[str, frozenset[str]]:
        if self.documents is None:
            chunk_ids = list(dict.fromkeys(c for entry in self.reports.values() for c in entry["chunk_ids"]))
            document_of = {chunk_id: chunk.document_id for chunk_id, chunk in graph.get_chunks(chunk_ids).items()}
            # a chunk the graph no longer holds (its document was removed) rests on nothing a caller could read
            self.documents = {cid: frozenset(document_of.get(c, "") for c in entry["chunk_ids"]) for cid, entry in self.reports.items()}
        return self.documents

    def readable(self, graph: Any, candidates: Mapping[str, Any], request: QueryRequest) -> dict[str, Any]:
        """The ``candidates`` whose every supporting document the caller may read (all without an access scope).

        A report summarises its whole community: written from documents the caller may not read, it would
        tell what they say, so it is left out rather than shown in part (docs/security.md).
        """
        scope = request.access
        if scope is None or not scope.restricted:
            return dict(candidates)
        documents = self.documents_of(graph)
        return {cid: entry for cid, entry in candidates.items() if scope.allows_all(documents.get(cid, ("",)))}


#: parsed reports by the SHA-256 of the reports file: a query hashes the bytes (milliseconds) instead of
#: parsing JSON and tokenising every report again; a new build changes the hash
_PARSED: OrderedDict[str, ParsedReports] = OrderedDict()
_PARSED_KEPT = 4


def load_reports(objects: Any) -> ParsedReports:
    if not objects.exists(persist.REPORTS_KEY):
        return ParsedReports({}, {})
    raw = objects.get_bytes(persist.REPORTS_KEY)
    digest = hashlib.sha256(raw).hexdigest()
    if digest in _PARSED:
        _PARSED.move_to_end(digest)
        return _PARSED[digest]
    reports = dict(json.loads(raw)["reports"])
    parsed = ParsedReports(reports, {cid: frozenset(words(report_text(e["report"]))) for cid, e in reports.items()})
    _PARSED[digest] = parsed
    while len(_PARSED) > _PARSED_KEPT:
        _PARSED.popitem(last=False)
    return parsed


def _chunk_passes(chunk: Any, filters: Mapping[str, Any]) -> bool:
    # a stored chunk keeps its document id beside its metadata; filters may name it
    return matches_filters({**chunk.metadata, "document_id": chunk.document_id}, filters)


def _chunk_result(chunk: Any, score: float, mode: str, **extra: Any) -> QueryResult:
    return QueryResult(id=chunk.id, text=chunk.text, score=float(score), kind="chunk",
                       metadata={**dict(chunk.metadata), "document_id": chunk.document_id, **extra}, sources=(mode,))


class _GraphRagEngine:
    mode: ClassVar[str]
    required_components: ClassVar[frozenset] = frozenset({EMBEDDING})

    def _stores(self, context: QueryContext) -> tuple[Any, Any, Any]:
        asset = context.find_asset(REPORTS)
        tables = context.find_asset(GRAPH_TABLES)
        objects = context.get_component(asset.store if asset else "stores.objects")
        graph = context.get_component(tables.store if tables else "stores.graph")
        vector_store = context.get_component("stores.vector")
        return objects, graph, vector_store


class GraphRagGlobalSearchEngine(_GraphRagEngine):
    """Map-reduce over community reports; results are the best reports' supporting chunks."""

    mode: ClassVar[str] = persist.GLOBAL_MODE
    #: the upstream Heta framework's name for this mode, so existing calls keep working
    aliases: ClassVar[tuple[str, ...]] = ("graph_rag_global_query",)
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({REPORTS, GRAPH_TABLES})
    options_type: ClassVar[type] = GlobalSearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: GlobalSearchOptions = query_options(self, request)
        objects, graph, vector_store = self._stores(context)
        parsed = await asyncio.to_thread(load_reports, objects)
        stored, report_words = parsed.reports, parsed.words
        candidates = {cid: e for cid, e in stored.items() if options.level is None or e["level"] == options.level}
        candidates = {cid: e for cid, e in candidates.items() if float(e["report"].get("rating", 0)) >= options.min_rating}
        candidates = await asyncio.to_thread(parsed.readable, graph, candidates, request)
        if not candidates:
            issue = query_issue("empty_graph", "There are no community reports (no communities, or none at this level).", "returned_nothing")
            return QueryResponse(metadata={"issues": [issue], "reports": []})
        query_vector = np.asarray(await context.embed_query(request.text), dtype=np.float32).reshape(1, -1)
        rated = await asyncio.to_thread(self._map, vector_store, candidates, report_words, query_vector, request.text)
        kept, used = [], 0
        for cid, score in rated[: options.report_top_k]:  # reduce: the best that fit the budget
            tokens = count_tokens(report_text(candidates[cid]["report"]))
            if used + tokens > options.max_report_tokens:
                break
            kept.append((cid, score, tokens))
            used += tokens
        results = await asyncio.to_thread(self._chunks, graph, candidates, kept, request, options)
        metadata: dict[str, Any] = {
            "reports": [{"community_id": cid, "title": candidates[cid]["report"]["title"], "level": candidates[cid]["level"],
                         "score": round(score, 4), "tokens": tokens, "source": candidates[cid]["source"]} for cid, score, tokens in kept],
            "context": {"reports_rated": len(rated), "reports_kept": len(kept), "report_tokens": used},
        }
        issues = await self._answer(context, request, options, [candidates[cid]["report"] for cid, _, _ in kept], metadata)
        if issues:
            metadata["issues"] = issues
        return QueryResponse(results=results[: request.top_k], metadata=metadata)

    def _map(self, vector_store: Any, candidates: Mapping[str, Any], report_words: Mapping[str, frozenset[str]],
             query_vector: Any, text: str) -> list[tuple[str, float]]:
        cosine: dict[str, float] = {}
        if vector_store.has_collection(persist.REPORT_COLLECTION):
            collection = vector_store.collection(persist.REPORT_COLLECTION)
            for hit in collection.search(query_vector, min(len(collection), max(len(candidates), 1)))[0]:
                cosine[hit.id] = float(hit.score)
        wanted = words(text)
        scores = []
        for cid in candidates:
            overlap = len(wanted & report_words[cid]) / len(wanted) if wanted else 0.0
            scores.append((cid, cosine.get(cid, 0.0) + 0.5 * overlap))
        return sorted(scores, key=lambda item: (-item[1], item[0]))

    def _chunks(self, graph: Any, candidates: Mapping[str, Any], kept: Sequence[tuple[str, float, int]], request: QueryRequest,
                options: GlobalSearchOptions) -> list[QueryResult]:
        wanted = words(request.text)
        all_ids = [c for cid, _, _ in kept for c in candidates[cid]["chunk_ids"]]
        chunks = graph.get_chunks(list(dict.fromkeys(all_ids)))
        results: dict[str, QueryResult] = {}
        for cid, score, _ in kept:
            entry = candidates[cid]
            present = [chunks[c] for c in entry["chunk_ids"] if c in chunks and _chunk_passes(chunks[c], request.filters)]
            present.sort(key=lambda ch: -len(wanted & words(ch.text)))  # stable: support order breaks ties
            for position, chunk in enumerate(present[: options.chunks_per_report]):
                if chunk.id not in results:
                    results[chunk.id] = _chunk_result(chunk, score - position * 1e-3, self.mode, community_id=cid,
                                                      report_title=entry["report"]["title"])
        return sorted(results.values(), key=lambda r: (-r.score, r.id))

    async def _answer(self, context: QueryContext, request: QueryRequest, options: GlobalSearchOptions,
                      kept_reports: list[Mapping[str, Any]], metadata: dict[str, Any]) -> list[dict[str, Any]]:
        if not options.llm_answer:
            return []
        if not context.has_component(LANGUAGE_KEY):
            return [query_issue("graphrag_no_language_model", "The recipe has no language model: the reports are returned without an answer.",
                                "returned_reports_without_answer")]
        if not kept_reports:
            return []
        body = "\n\n".join(f"Report {i}: {report_text(r)}" for i, r in enumerate(kept_reports, start=1))
        messages = [Message("system", "Answer the question from the community reports given, citing report numbers. "
                                      "Say so when they do not answer it."),
                    Message("user", f"Question: {request.text}\n\n{body}")]
        try:
            completion = await asyncio.wait_for(context.get_component(LANGUAGE_KEY).complete(messages, temperature=0.0), ANSWER_TIMEOUT)
        except Exception as exc:  # noqa: BLE001 — the reports are still a useful answer
            return [query_issue("graphrag_answer_failed", f"The language model could not answer ({type(exc).__name__}); the reports are returned.",
                                "returned_reports_without_answer")]
        metadata["answer"] = getattr(completion, "text", "") or ""
        return []


class GraphRagLocalSearchEngine(_GraphRagEngine):
    """Entities near the query, their relations, their communities' reports and text units, within a token budget."""

    mode: ClassVar[str] = persist.LOCAL_MODE
    aliases: ClassVar[tuple[str, ...]] = ("graph_rag_local_query",)
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset({REPORTS, GRAPH_TABLES, GRAPH_VECTORS})
    options_type: ClassVar[type] = LocalSearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options: LocalSearchOptions = query_options(self, request)
        objects, graph, vector_store = self._stores(context)
        index = context.find_asset(GRAPH_VECTORS)
        entity_collection = dict((index.metadata if index else {}).get("collections") or {}).get("entities", ENTITY_COLLECTION)
        if not vector_store.has_collection(entity_collection):
            issue = query_issue("empty_graph", "The graph has no entity vectors yet.", "returned_nothing")
            return QueryResponse(metadata={"issues": [issue]})
        query_vector = np.asarray(await context.embed_query(request.text), dtype=np.float32).reshape(1, -1)
        return await asyncio.to_thread(self._local, objects, graph, vector_store.collection(entity_collection), query_vector, request, options)

    def _local(self, objects: Any, graph: Any, collection: Any, query_vector: Any, request: QueryRequest,
               options: LocalSearchOptions) -> QueryResponse:
        visible = fact_visibility(graph, request)  # the caller's documents and the request's document filter
        hits = collection.search(query_vector, options.top_k_entities, filters=visible.entity_filter)[0]
        entities = graph.get_entities([h.id for h in hits])
        chosen = [h.id for h in hits if h.id in entities]
        if visible.scope is not None:  # a store that could not narrow the search: keep what the caller can read
            readable = graph.evidence("entity", chosen)
            chosen = [e for e in chosen if visible.readable_rows(readable.get(e, []))]
        if not chosen:
            return QueryResponse(metadata={"issues": [query_issue("empty_graph", "No entity is near the query.", "returned_nothing")]})
        budget = options.max_tokens - count_tokens(request.text)
        report_budget = int(budget * options.community_prop)
        unit_budget = int(budget * options.text_unit_prop)
        fact_budget = budget - report_budget - unit_budget

        chosen_set = set(chosen)
        touching = [r for r in graph.relations_touching(chosen) if visible.allows_relation(r.id)]
        # GraphRAG's order: relations among the chosen entities first, then those reaching out, by how connected
        degree = Counter(e for r in touching for e in (r.source_id, r.target_id))
        touching.sort(key=lambda r: (-((r.source_id in chosen_set) + (r.target_id in chosen_set)), -(degree[r.source_id] + degree[r.target_id]), r.id))
        facts, used = [], 0
        for entity_id in chosen:
            e = entities[entity_id]
            text = f"{e.name} ({e.type}): {e.description}"
            if used + count_tokens(text) > fact_budget:
                break
            facts.append({"entity_id": e.id, "name": e.name, "type": e.type})
            used += count_tokens(text)
        relations = []
        for r in touching[: options.top_k_relationships]:
            text = f"{r.source_id} {r.name} {r.target_id}: {r.description}"
            if used + count_tokens(text) > fact_budget:
                break
            relations.append({"relation_id": r.id, "source_id": r.source_id, "target_id": r.target_id, "name": r.name})
            used += count_tokens(text)

        parsed = load_reports(objects)
        stored = parsed.readable(graph, parsed.reports, request)
        overlap = {cid: len(chosen_set & set(e["entity_ids"])) for cid, e in stored.items()}
        ranked_reports = sorted((cid for cid, n in overlap.items() if n), key=lambda c: (-overlap[c], -float(stored[c]["report"].get("rating", 0)), c))
        kept_reports, report_tokens = [], 0
        for cid in ranked_reports:
            tokens = count_tokens(report_text(stored[cid]["report"]))
            if report_tokens + tokens > report_budget:
                break
            kept_reports.append({"community_id": cid, "title": stored[cid]["report"]["title"], "level": stored[cid]["level"], "tokens": tokens})
            report_tokens += tokens

        rows = graph.evidence("entity", chosen)
        rank = {e: i for i, e in enumerate(chosen)}
        support = Counter(row[0] for rows_ in rows.values() for row in rows_)
        first = {}
        for entity_id in chosen:
            for row in rows.get(entity_id, []):
                first.setdefault(row[0], rank[entity_id])
        order = sorted(first, key=lambda c: (first[c], -support[c], c))  # GraphRAG: by entity order, then by links
        chunks = graph.get_chunks(order)
        results, unit_tokens = [], 0
        for chunk_id in order:
            chunk = chunks.get(chunk_id)
            if chunk is None or not _chunk_passes(chunk, request.filters):
                continue
            tokens = count_tokens(chunk.text)
            if unit_tokens + tokens > unit_budget:
                break
            unit_tokens += tokens
            results.append(_chunk_result(chunk, 1.0 / (len(results) + 1), self.mode, supports=support[chunk_id]))
        metadata = {
            "entities": facts, "relations": relations, "reports": kept_reports,
            "context": {"entity_relation_tokens": used, "report_tokens": report_tokens, "text_unit_tokens": unit_tokens,
                        "text_units": len(results), "budget": budget},
        }
        return QueryResponse(results=results[: request.top_k], metadata=metadata)


ENGINES = (GraphRagGlobalSearchEngine, GraphRagLocalSearchEngine)
