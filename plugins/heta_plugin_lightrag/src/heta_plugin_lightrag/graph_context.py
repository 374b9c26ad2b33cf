"""LightRAG's retrieval over a Heta graph, read only through core's ``GraphStore`` contract.

local   entities closest to the low-level keywords (the entity vector index), the
        relations of their one-hop neighbourhood (ranked by the degree of their
        endpoints, as LightRAG ranks edges), and the chunks that evidence them.
global  relations closest to the high-level keywords (the relation vector index),
        their endpoint entities, and the chunks that evidence them.
hybrid  both, merged round-robin (local first), each fact once.

Then LightRAG's budgets: entity text is cut at ``max_entity_tokens``, relation
text at ``max_relation_tokens`` (a list stops at the first item that would
exceed it); chunks are picked per fact (``related_chunk_number``, the chunks that
evidence most of the kept facts first: LightRAG's ``WEIGHT`` pick), merged
round-robin (with ``vector_search``'s chunks in mix mode), at most
``chunk_top_k``, and cut at what ``max_total_tokens`` leaves after the query,
the entities and the relations. Tokens are counted as core's splitter counts
them (a word or a CJK character; no tokenizer download).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

import attrs
from heta_framework.builtin.text_split import count_tokens
from heta_framework.kb.graph_store import StoredChunk, StoredEntity, StoredRelation
from heta_framework.kb.query_input import matches_filters
from heta_framework.kb.search import QueryResult
from heta_plugin_graph.vectors import relations_of_hit
from heta_plugin_graph.visibility import FactVisibility

from heta_plugin_lightrag.options import LightRagOptions


@attrs.frozen
class RankedFacts:
    """Entity and relation ids in context order, with the vector similarity of those found by a search."""

    entities: tuple[str, ...] = ()
    relations: tuple[str, ...] = ()
    similarity: Mapping[str, float] = attrs.field(factory=dict)


def round_robin(*lists: Iterable[Any], key: Callable[[Any], Hashable] = lambda item: item) -> list[Any]:
    """One item from each list in turn, each item once (LightRAG merges its local and global lists this way)."""
    iterators = [iter(items) for items in lists]
    seen: set[Hashable] = set()
    merged: list[Any] = []
    while iterators:
        for iterator in list(iterators):
            for item in iterator:
                if key(item) not in seen:
                    seen.add(key(item))
                    merged.append(item)
                    break
            else:
                iterators.remove(iterator)
    return merged


def _own_id(hit: Any) -> list[str]:
    return [hit.id]


def _hits(collection: Any, vector: Any, top_k: int, threshold: float, ids_of: Callable[[Any], list[str]] = _own_id,
          filters: Mapping[str, Any] | None = None, allows: Callable[[str], bool] = lambda _: True) -> list[tuple[str, float]]:
    """``(id, score)`` of the best ``top_k`` facts scoring at least ``threshold``; ``ids_of`` gives the facts a hit
    stands for (relations that embed one text share its vector, and each of them has its score)."""
    if collection is None:
        return []
    hits = collection.search(vector, top_k, filters=filters)[0]
    found = [(i, float(hit.score)) for hit in hits if hit.score >= threshold for i in ids_of(hit) if allows(i)]
    return found[:top_k]


def local_facts(graph: Any, entity_index: Any, vector: Any, options: LightRagOptions, visible: FactVisibility | None = None) -> RankedFacts:
    visible = visible or FactVisibility()
    hits = _hits(entity_index, vector, options.graph_top_k, options.cosine_threshold, filters=visible.entity_filter)
    stored = graph.get_entities([i for i, _ in hits])
    seeds = [i for i, _ in hits if i in stored]  # a vector whose entity is gone is skipped
    if not seeds:
        return RankedFacts()
    # a relation only documents the caller may not read support is no edge of their graph
    touching = [r for r in graph.relations_touching(seeds) if visible.allows_relation(r.id)]
    degree = Counter(endpoint for r in touching for endpoint in (r.source_id, r.target_id))
    seed_rank = {entity_id: rank for rank, entity_id in enumerate(seeds)}

    def edge_order(relation: StoredRelation) -> tuple:
        best_seed = min(seed_rank.get(relation.source_id, len(seeds)), seed_rank.get(relation.target_id, len(seeds)))
        return (-(degree[relation.source_id] + degree[relation.target_id]), best_seed, relation.id)

    relations = tuple(r.id for r in sorted(touching, key=edge_order))
    return RankedFacts(tuple(seeds), relations, {f"entity:{i}": s for i, s in hits if i in stored})


def global_facts(graph: Any, relation_index: Any, vector: Any, options: LightRagOptions, visible: FactVisibility | None = None) -> RankedFacts:
    visible = visible or FactVisibility()
    hits = _hits(relation_index, vector, options.graph_top_k, options.cosine_threshold, ids_of=relations_of_hit,
                 filters=visible.relation_filter, allows=visible.allows_relation)
    stored = graph.get_relations([i for i, _ in hits])
    relations = [i for i, _ in hits if i in stored]
    endpoints = [i for i in dict.fromkeys(e for i in relations for e in (stored[i].source_id, stored[i].target_id))
                 if visible.allows_entity(i)]
    return RankedFacts(tuple(endpoints), tuple(relations), {f"relation:{i}": s for i, s in hits if i in stored})


def merge(local: RankedFacts, global_: RankedFacts) -> RankedFacts:
    return RankedFacts(
        tuple(round_robin(local.entities, global_.entities)),
        tuple(round_robin(local.relations, global_.relations)),
        {**global_.similarity, **local.similarity},
    )


def entity_text(entity: StoredEntity, description: str | None = None) -> str:
    description = entity.description if description is None else description
    return f"{entity.name} ({entity.type}): {description}" if description else f"{entity.name} ({entity.type})"


def relation_text(relation: StoredRelation, names: Mapping[str, str], description: str | None = None) -> str:
    description = relation.description if description is None else description
    source, target = names.get(relation.source_id, relation.source_id), names.get(relation.target_id, relation.target_id)
    text = f"{source} —{relation.name or relation.type}→ {target}"
    return f"{text}: {description}" if description else text


def within_budget(items: Sequence[tuple[Any, str]], budget: int) -> tuple[list[tuple[Any, str, int]], int]:
    """The leading items whose texts fit in ``budget`` tokens together (LightRAG stops at the first that does not)."""
    kept, used = [], 0
    for item, text in items:
        tokens = count_tokens(text)
        if used + tokens > budget:
            break
        kept.append((item, text, tokens))
        used += tokens
    return kept, used



@attrs.frozen
class GraphContext:
    """The budgeted context: fact results (each with its chosen evidence chunks), the chunks, and the accounting."""

    facts: tuple[QueryResult, ...]
    chunks: tuple[QueryResult, ...]
    accounting: Mapping[str, Any]


def build_context(
    graph: Any,
    ranked: RankedFacts,
    *,
    query: str,
    mode: str,
    options: LightRagOptions,
    filters: Mapping[str, Any],
    vector_chunks: Sequence[QueryResult] = (),
    visible: FactVisibility | None = None,
) -> GraphContext:
    visible = visible or FactVisibility()
    entities = graph.get_entities(list(ranked.entities))
    relations = graph.get_relations(list(ranked.relations))
    endpoint_ids = {e for r in relations.values() for e in (r.source_id, r.target_id)} - set(entities)
    names = {i: e.name for i, e in {**entities, **graph.get_entities(list(endpoint_ids))}.items()}
    entity_list = [entities[i] for i in ranked.entities if i in entities]
    relation_list = [relations[i] for i in ranked.relations if i in relations]
    descriptions: dict[str, str] = {}
    if visible.scope is not None:
        # under an access scope, before the budgets: a fact the caller cannot read takes no room, and a fact
        # resting partly on unreadable documents says only what its readable evidence says
        rows = {**graph.evidence("entity", [e.id for e in entity_list]), **graph.evidence("relation", [r.id for r in relation_list])}
        entity_list = [e for e in entity_list if visible.readable_rows(rows.get(e.id, []))]
        relation_list = [r for r in relation_list if visible.readable_rows(rows.get(r.id, []))]
        descriptions = {f.id: visible.description(f.description, rows.get(f.id, [])) for f in (*entity_list, *relation_list)}

    kept_entities, entity_tokens = within_budget(
        [(e, entity_text(e, descriptions.get(e.id))) for e in entity_list], options.max_entity_tokens
    )
    kept_relations, relation_tokens = within_budget(
        [(r, relation_text(r, names, descriptions.get(r.id))) for r in relation_list], options.max_relation_tokens
    )
    entity_rows = {k: visible.readable_rows(v) for k, v in graph.evidence("entity", [e.id for e, _, _ in kept_entities]).items()}
    relation_rows = {k: visible.readable_rows(v) for k, v in graph.evidence("relation", [r.id for r, _, _ in kept_relations]).items()}
    # LightRAG's WEIGHT pick: a chunk that evidences more of the kept facts comes first
    weight = Counter(row[0] for rows in (*entity_rows.values(), *relation_rows.values()) for row in rows)

    def picked(rows: Sequence[tuple[str, str, str]]) -> list[str]:
        return [row[0] for row in sorted(rows, key=lambda row: (-weight[row[0]], row[0]))[: options.related_chunk_number]]

    per_entity = {e.id: picked(entity_rows.get(e.id, [])) for e, _, _ in kept_entities}
    per_relation = {r.id: picked(relation_rows.get(r.id, [])) for r, _, _ in kept_relations}
    candidates = round_robin(
        [c.id for c in vector_chunks],
        dict.fromkeys(c for ids in per_entity.values() for c in ids),
        dict.fromkeys(c for ids in per_relation.values() for c in ids),
    )
    stored_chunks: dict[str, StoredChunk] = graph.get_chunks([c for c in candidates if c not in {v.id for v in vector_chunks}])
    vector_by_id = {c.id: c for c in vector_chunks}
    texts: list[tuple[str, str]] = []
    for chunk_id in candidates:
        if chunk_id in vector_by_id:
            texts.append((chunk_id, vector_by_id[chunk_id].text))
        elif chunk_id in stored_chunks and matches_filters(stored_chunks[chunk_id].metadata, filters):
            texts.append((chunk_id, stored_chunks[chunk_id].text))
    chunk_budget = max(0, options.max_total_tokens - count_tokens(query) - entity_tokens - relation_tokens)
    kept_chunks, chunk_tokens = within_budget(texts[: options.chunk_top_k], chunk_budget)
    chunk_results: dict[str, QueryResult] = {}
    for rank, (chunk_id, text, _) in enumerate(kept_chunks, start=1):
        if chunk_id in vector_by_id:
            chunk_results[chunk_id] = attrs.evolve(vector_by_id[chunk_id], sources=(mode,))
        else:
            chunk = stored_chunks[chunk_id]
            chunk_results[chunk_id] = QueryResult(
                id=chunk_id, text=text, score=1.0 / rank, kind="chunk",
                metadata={**dict(chunk.metadata), "document_id": chunk.document_id}, sources=(mode,),
            )

    def fact_result(kind: str, fact: Any, text: str, tokens: int, chunk_ids: Sequence[str]) -> QueryResult | None:
        evidence = tuple(
            attrs.evolve(chunk_results[c], metadata={**chunk_results[c].metadata, "evidence_for": f"{kind}:{fact.id}"})
            for c in chunk_ids if c in chunk_results
        )
        if filters and not evidence:
            return None  # as in heta_graph_search: a fact is returned only if some evidence passes the filters
        metadata: dict[str, Any] = {"type": fact.type, "description": descriptions.get(fact.id, fact.description), "tokens": tokens,
                                    "document_ids": sorted({e.document_id for e in evidence if e.document_id})}
        if kind == "entity":
            metadata |= {"entity_id": fact.id, "name": fact.name}
        else:
            metadata |= {"relation_id": fact.id, "name": fact.name, "source_id": fact.source_id, "target_id": fact.target_id,
                         "source": names.get(fact.source_id, fact.source_id), "target": names.get(fact.target_id, fact.target_id)}
        similarity = ranked.similarity.get(f"{kind}:{fact.id}")
        if similarity is not None:
            metadata["similarity"] = similarity
        return QueryResult(id=f"{kind}:{fact.id}", text=text, score=0.0, kind=kind, metadata=metadata, evidence=evidence, sources=(mode,))

    entity_results = [fact_result("entity", e, t, n, per_entity[e.id]) for e, t, n in kept_entities]
    relation_results = [fact_result("relation", r, t, n, per_relation[r.id]) for r, t, n in kept_relations]
    ordered = round_robin([r for r in entity_results if r], [r for r in relation_results if r], key=lambda r: r.id)
    # scores are the context order (LightRAG ranks by list position, not by one comparable number)
    facts = tuple(attrs.evolve(result, score=1.0 / rank) for rank, result in enumerate(ordered, start=1))
    accounting = {
        "entities": len(kept_entities), "entity_tokens": entity_tokens,
        "relations": len(kept_relations), "relation_tokens": relation_tokens,
        "chunks": len(kept_chunks), "chunk_tokens": chunk_tokens, "chunk_budget": chunk_budget,
        "entities_found": len(ranked.entities), "relations_found": len(ranked.relations), "chunk_candidates": len(candidates),
    }
    return GraphContext(facts, tuple(chunk_results.values()), accounting)
