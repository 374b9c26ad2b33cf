"""``heta_graph_search``: entity and relation vectors, SQL hydration, one-hop expansion, ranked evidence.

1. Embed the query; search the ``graph_entities`` and ``graph_relations`` collections.
2. Hydrate hits from the graph tables (a vector whose fact is gone is skipped).
3. Expand one hop from the best entities: neighbours through stored relations,
   ranked by their own similarity to the query, at most ``max_neighbors``,
   scored ``similarity * neighbor_weight``.
4. Attach each fact's evidence chunks, most relevant to the query first.
5. Rank facts by similarity x (1 - evidence_weight + evidence_weight x the
   relevance of the best evidence chunk): a name is as close to every question
   about it, and its evidence is what tells those questions apart.

Results have ``kind`` "entity" or "relation" and ids ``entity:<id>`` /
``relation:<id>``; ``evidence`` holds ``chunk`` results whose id is the chunk id,
so a fusion engine can credit a chunk for backing a graph hit.

Options (``kb.query(..., options={...})``):

==================  =========  ==============================================
``entity_top_k``    top_k      entity vector hits considered
``relation_top_k``  top_k      relation vector hits considered
``max_neighbors``   5          one-hop neighbours added (0 turns expansion off)
``expand_from``     3          how many of the best entities are expanded
``neighbor_weight`` 0.8        neighbour score = its similarity x this
``max_evidence``    3          evidence chunks attached per fact
``min_score``       0.0        hits scoring lower are dropped
``include``         both       "entities", "relations" or "both"
``evidence_weight`` 0.5        share of the score from the best evidence's relevance
==================  =========  ==============================================

Filters apply to evidence chunk metadata (``document_id``, ``source``, ...):
a fact is returned only if some evidence chunk passes them. A ``document_id`` filter (a caller's
access scope is one) is pushed into the vector search when the graph store offers
``facts_of_documents``: only facts with evidence in those documents are candidates, so top-k is
full and one-hop expansion never crosses a relation only hidden documents support.

Derived text under an access scope (docs/security.md): a fact whose evidence is not all readable by
the caller is rebuilt from the readable evidence alone: its description is the best description of
that evidence, and its attributes and aliases (merged from every document) are left out.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
from heta_framework.common.validators import number, one_of, result_count, whole_number
from heta_framework.kb.query_input import matches_filters
from heta_framework.kb.query_options import parse_options
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAssetRef, query_issue
from heta_framework.kb.steps import model_ref
from heta_framework.kb.stores import GraphStore, VectorStoreProtocol
from heta_framework.kb.tracing import store_span

from heta_plugin_graph.assets import GRAPH_SEARCH_MODE
from heta_plugin_graph.normalize import normalize_name
from heta_plugin_graph.vectors import ENTITY_COLLECTION, RELATION_COLLECTION
from heta_plugin_graph.visibility import FactVisibility, fact_visibility

_WORDS = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@attrs.frozen
class GraphSearchOptions:
    """``heta_graph_search`` options (the table in this module's docstring); checked before the mode runs."""

    entity_top_k: int | None = attrs.field(default=None, validator=result_count(optional=True), metadata={"default_doc": "top_k"})
    relation_top_k: int | None = attrs.field(default=None, validator=result_count(optional=True), metadata={"default_doc": "top_k"})
    max_neighbors: int = attrs.field(default=5, validator=result_count(0))
    expand_from: int = attrs.field(default=3, validator=whole_number(1))
    neighbor_weight: float = attrs.field(default=0.8, validator=number(minimum=0))
    max_evidence: int = attrs.field(default=3, validator=result_count(0))
    min_score: float = attrs.field(default=0.0, validator=number())
    include: str = attrs.field(default="both", validator=one_of(("both", "entities", "relations")))
    evidence_weight: float = attrs.field(default=0.5, validator=number(minimum=0, maximum=1))

    @classmethod
    def from_request(cls, options: Mapping[str, Any]) -> GraphSearchOptions:
        """Typed options; an unknown option or a bad value raises ``InvalidQueryError``."""
        return parse_options(cls, options, mode=GRAPH_SEARCH_MODE)


def relevance_terms(text: str) -> set[str]:
    """Normalised words, plus character bigrams of CJK runs (Chinese has no spaces)."""
    terms: set[str] = set()
    normalized = normalize_name(text)
    has_cjk = _CJK.search(normalized) is not None  # once per text: most texts have none, and words need no check
    for word in _WORDS.findall(normalized):
        if has_cjk and _CJK.search(word):
            chars = list(word)
            terms.update(chars[i] + chars[i + 1] for i in range(len(chars) - 1))
            terms.update(chars)
        elif len(word) > 1:
            terms.add(word)
    return terms


@functools.lru_cache(maxsize=8192)
def _text_terms(text: str) -> frozenset[str]:
    # the same evidence chunks come back query after query: tokenise each text once per process, not per query
    # (keyed by the text itself, so a chunk rewritten by a rebuild is tokenised again)
    normalized = normalize_name(text)
    if _CJK.search(normalized) is None:
        # most chunks: the words as they are, built in C; the one-letter words relevance_terms drops never
        # meet a query term (those are longer), so keeping them changes no score
        return frozenset(_WORDS.findall(normalized))
    return frozenset(relevance_terms(text))


def lexical_relevance(query_terms: set[str], text: str) -> float:
    if not query_terms:
        return 0.0
    return len(query_terms & _text_terms(text)) / len(query_terms)



#: relation hits fetched per wanted one in an index with a vector per relation (built before relations shared
#: one vector per text), so that collapsing same-sentence co-occurrences still fills the list: at 4 per wanted
#: hit, half of the bench's queries needed a second scan (a scan of 95k vectors costs 6.4 ms at 40 hits and
#: 7.6 ms at 160, so fetching more at once is cheaper than scanning again)
RELATION_OVERFETCH = 16
#: the same in an index of one vector per text, where a duplicate is rare (a text whose carrier changed)
DISTINCT_RELATION_OVERFETCH = 2


def _distinct_relation_hits(collection: Any, query_vector: np.ndarray, wanted: int, min_score: float,
                            overfetch: int = RELATION_OVERFETCH, filters: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The best ``wanted`` relation hits with one hit per distinct vector.

    The nlp extractor's co-occurrences of one sentence share that sentence's vector
    (vectors.relation_text), so a sentence naming six entities would take fifteen of
    the top relation slots with one piece of evidence. An index written now stores
    one vector per text (writer.text_carriers); one written before has a vector per
    relation. Either way, keep the best hit of each embedded text (its ``text_hash``,
    stored beside every graph vector) and fetch more to fill the list.
    """
    fetch = wanted * overfetch
    while True:
        hits = collection.search(query_vector, fetch, filters=filters)[0]
        kept: dict[str, float] = {}
        seen: set[str] = set()
        for hit in hits:
            if hit.score < min_score:
                return kept  # hits come best first: the rest score lower still
            text = hit.metadata.get("text_hash") or hit.id  # a vector written without a hash stands for itself
            if text not in seen:
                seen.add(text)
                kept[hit.id] = hit.score
                if len(kept) == wanted:
                    return kept
        if len(hits) < fetch:  # the collection has no more
            return kept
        fetch *= 4  # rare: one text shared by more facts than we fetched


def _entity_hits(collection: Any, query_vector: np.ndarray, options: GraphSearchOptions, top_k: int,
                 filters: Mapping[str, Any] | None = None) -> dict[str, float]:
    """Entity id -> similarity: the hits to return, and the seeds of the one-hop expansion."""
    if options.include == "relations" and not options.max_neighbors:
        return {}
    hits = collection.search(query_vector, options.entity_top_k or top_k, filters=filters)[0]
    return {hit.id: hit.score for hit in hits if hit.score >= options.min_score}


async def _nothing() -> dict[str, float]:
    return {}


class HetaGraphSearchEngine:
    mode: ClassVar[str] = GRAPH_SEARCH_MODE
    required_assets: ClassVar[frozenset[SearchAssetRef]] = frozenset(
        {SearchAssetRef(kind="graph_tables"), SearchAssetRef(kind="graph_vector_index")}
    )
    required_components: ClassVar[frozenset] = frozenset({model_ref("embedding")})
    options_type: ClassVar[type] = GraphSearchOptions

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        options = GraphSearchOptions.from_request(request.options)
        tables = context.find_asset(SearchAssetRef(kind="graph_tables"))
        index = context.find_asset(SearchAssetRef(kind="graph_vector_index"))
        graph: GraphStore = context.get_component(tables.store if tables else "stores.graph")
        vector_store: VectorStoreProtocol = context.get_component(index.store if index else "stores.vector")
        names = dict((index.metadata if index else {}).get("collections") or {})
        entity_name, relation_name = names.get("entities", ENTITY_COLLECTION), names.get("relations", RELATION_COLLECTION)
        if not vector_store.has_collection(entity_name):
            return QueryResponse(metadata={"issues": [query_issue("empty_graph", "The graph has no entity vectors yet.", "returned_nothing")]})
        # once per request: hybrid_search's vector_search needs the same vector
        query_vector = np.asarray(await context.embed_query(request.text), dtype=np.float32).reshape(1, -1)
        entities_collection = vector_store.collection(entity_name)
        relations_collection = vector_store.collection(relation_name) if vector_store.has_collection(relation_name) else None
        want_relations = options.include in ("both", "relations") and relations_collection is not None
        one_per_text = (index.metadata if index else {}).get("relation_vectors") == "one_per_text"
        overfetch = DISTINCT_RELATION_OVERFETCH if one_per_text else RELATION_OVERFETCH
        tables_key, index_key = tables.store if tables else "stores.graph", index.store if index else "stores.vector"
        with store_span("graph.visibility", tables_key):
            visible = await asyncio.to_thread(fact_visibility, graph, request)
        if visible.nothing_visible:
            return QueryResponse(metadata={"candidates": 0})
        # the two collections are scanned at once, each on its own thread: the scans are most of the mode's time
        # without the model (55k entity and 95k relation vectors at the 10k bench tier), and FAISS frees the GIL
        with store_span("vector.search", index_key, {"heta.store.collection": entity_name, "heta.query.top_k": request.top_k,
                                                     "heta.graph.relations": want_relations}):
            entity_hits, relation_scores = await asyncio.gather(
                asyncio.to_thread(_entity_hits, entities_collection, query_vector, options, request.top_k, visible.entity_filter),
                asyncio.to_thread(_distinct_relation_hits, relations_collection, query_vector, options.relation_top_k or request.top_k,
                                  options.min_score, overfetch, visible.relation_filter) if want_relations else _nothing(),
            )
        # the neighbourhood walk and the reads of the facts' records and evidence
        with store_span("graph.expand", tables_key, {"heta.graph.seeds": len(entity_hits)}):
            return await asyncio.to_thread(
                self._search, request, options, graph, entities_collection, query_vector, entity_hits, relation_scores, visible,
            )

    def _search(self, request: QueryRequest, options: GraphSearchOptions, graph: Any, entities_collection: Any,
                query_vector: np.ndarray, entity_hits: dict[str, float], relation_scores: dict[str, float],
                visible: FactVisibility) -> QueryResponse:
        top_k = request.top_k
        want_entities = options.include in ("both", "entities")
        entity_scores: dict[str, tuple[float, dict[str, Any]]] = {i: (score, {"hop": 0}) for i, score in entity_hits.items()}
        entities = graph.get_entities(list(entity_scores))
        entity_scores = {i: s for i, s in entity_scores.items() if i in entities}

        if options.max_neighbors > 0 and entity_scores:
            seeds = sorted(entity_scores, key=lambda i: -entity_scores[i][0])[: options.expand_from]
            via: dict[str, tuple[str, str]] = {}
            for relation in graph.relations_touching(seeds):
                if not visible.allows_relation(relation.id):
                    continue  # only documents the filter leaves out support it: not a way to reach anything
                for seed, other in ((relation.source_id, relation.target_id), (relation.target_id, relation.source_id)):
                    if seed in seeds and other not in entity_scores and other not in via:
                        via[other] = (relation.id, seed)
            if via:
                # rank neighbours by their own similarity to the query, not by how they were reached; the record
                # id is the entity id and an indexed column (a metadata key would be a scan over every entity)
                # only the best max_neighbors are kept: hydrating every neighbour's record cost more than the search
                ranked = entities_collection.search(query_vector, min(len(via), options.max_neighbors), filters={"id": list(via)})[0]
                for hit in ranked:
                    relation_id, seed = via[hit.id]
                    entity_scores[hit.id] = (
                        hit.score * options.neighbor_weight, {"hop": 1, "via_relation": f"relation:{relation_id}", "via_entity": f"entity:{seed}"}
                    )
                entities.update(graph.get_entities([h.id for h in ranked]))
        if not want_entities:
            entity_scores = {}
        relations = graph.get_relations(list(relation_scores))
        relation_scores = {i: s for i, s in relation_scores.items() if i in relations}
        endpoint_ids = {i for r in relations.values() for i in (r.source_id, r.target_id)} - set(entities)
        names = {i: e.name for i, e in {**entities, **graph.get_entities(list(endpoint_ids))}.items()}

        entity_evidence = graph.evidence("entity", list(entity_scores))
        relation_evidence = graph.evidence("relation", list(relation_scores))
        chunk_ids = {row[0] for rows in (*entity_evidence.values(), *relation_evidence.values()) for row in rows}
        chunks = graph.get_chunks(list(chunk_ids))
        query_terms = relevance_terms(request.text)
        # a chunk backs many facts: score it once per query, not once per fact it supports
        relevance = {chunk_id: lexical_relevance(query_terms, chunk.text) for chunk_id, chunk in chunks.items()}

        def ranked_evidence(rows: Sequence[tuple[str, str, str]]) -> tuple[list[tuple], float | None]:
            """The fact's best ``max_evidence`` rows that pass the filters, and the best one's relevance (None: none passes)."""
            # popular entities have hundreds of evidence rows: rank plain tuples; results are built for the facts returned
            found = [
                (-relevance[chunk_id], position, chunk_id, document_id, description)
                for position, (chunk_id, document_id, description) in enumerate(rows)
                if chunk_id in chunks and (not request.filters or matches_filters(chunks[chunk_id].metadata, request.filters))
            ]
            if not found:
                return [], None
            return (heapq.nsmallest(options.max_evidence, found) if options.max_evidence else []), -min(found)[0]

        def evidence_results(fact_result_id: str, kept: Sequence[tuple]) -> tuple[QueryResult, ...]:
            return tuple(
                QueryResult(
                    id=chunk_id, text=chunks[chunk_id].text, score=-negative_score, kind="chunk",
                    metadata={**dict(chunks[chunk_id].metadata), "document_id": document_id, "evidence_for": fact_result_id,
                              "fact_description": description},
                    sources=(GRAPH_SEARCH_MODE,),
                )
                for negative_score, _, chunk_id, document_id, description in kept
            )

        def ranked(similarity: float, best_evidence: float | None) -> float:
            # a fact is worth what its evidence says about the query: the name "Paris" is as close to every
            # question about Paris, and its evidence chunks are what tell those questions apart
            return similarity * (1.0 - options.evidence_weight + options.evidence_weight * (best_evidence or 0.0))

        # every candidate is scored, but results (and their evidence results) are built only for the top_k kept
        candidates: list[tuple[float, str, str, float, float | None, list[tuple]]] = []
        for kind, scored, evidence_rows in (
            ("entity", {i: score for i, (score, _) in entity_scores.items()}, entity_evidence),
            ("relation", relation_scores, relation_evidence),
        ):
            for fact_id, similarity in scored.items():
                kept, best_evidence = ranked_evidence(evidence_rows.get(fact_id, []))
                if request.filters and best_evidence is None:
                    continue
                candidates.append((ranked(similarity, best_evidence), f"{kind}:{fact_id}", fact_id, similarity, best_evidence, kept))
        candidates.sort(key=lambda c: (-c[0], c[1]))

        results: list[QueryResult] = []
        for score, result_id, fact_id, similarity, best_evidence, kept in candidates[:top_k]:
            evidence = evidence_results(result_id, kept)
            document_ids = sorted({e.metadata["document_id"] for e in evidence})
            if result_id.startswith("entity:"):
                entity = entities[fact_id]
                rows = entity_evidence.get(fact_id, [])
                description = visible.description(entity.description, rows)
                attributes, aliases = visible.merged_fields(entity.attributes, entity.aliases, rows)
                text = f"{entity.name} ({entity.type}): {description}" if description else f"{entity.name} ({entity.type})"
                results.append(QueryResult(
                    id=result_id, text=text, score=score, kind="entity",
                    metadata={"similarity": float(similarity), "evidence_relevance": best_evidence,
                              "entity_id": fact_id, "name": entity.name, "type": entity.type, "description": description,
                              "attributes": attributes, "aliases": aliases,
                              "document_ids": document_ids, **entity_scores[fact_id][1]},
                    evidence=evidence, sources=(GRAPH_SEARCH_MODE,),
                ))
                continue
            relation = relations[fact_id]
            source, target = names.get(relation.source_id, relation.source_id), names.get(relation.target_id, relation.target_id)
            description = visible.description(relation.description, relation_evidence.get(fact_id, []))
            text = f"{source} —{relation.name or relation.type}→ {target}"
            if description:
                text += f": {description}"
            results.append(QueryResult(
                id=result_id, text=text, score=score, kind="relation",
                metadata={"similarity": float(similarity), "evidence_relevance": best_evidence,
                          "relation_id": fact_id, "type": relation.type, "name": relation.name, "description": description,
                          "source_id": relation.source_id, "source": source, "target_id": relation.target_id, "target": target,
                          "document_ids": document_ids, "hop": 0},
                evidence=evidence, sources=(GRAPH_SEARCH_MODE,),
            ))
        return QueryResponse(results=results, metadata={"candidates": len(candidates)})
