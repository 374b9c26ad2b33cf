"""Write a ``GraphDraft`` into the graph store and its vectors (shared by BuildGraph and MergeGraphIntoStore).

1. Evidence must point at a chunk whose text we have (the run's chunk lists):
   a missing chunk becomes a ``missing_evidence_chunk`` issue, and a fact with
   no evidence left is not written.
2. One SQLite transaction upserts facts, evidence and evidence chunk text,
   replaces what the run's documents said before, and removes facts left
   without evidence together with their vectors.
3. Only facts whose vector is missing or whose text changed are embedded.
   Relations that embed the same text share one vector (``text_carriers``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import numpy as np
from heta_framework.common.threads import in_thread
from heta_framework.kb.documents import iter_chunks
from heta_framework.kb.stores import GraphStore, ObjectStoreProtocol

from heta_plugin_graph.draft import GraphDraft
from heta_plugin_graph.steps.common import all_chunk_keys
from heta_plugin_graph.store import RemovedFacts, StoredChunk
from heta_plugin_graph.vectors import (
    EMBED_CONCURRENCY,
    ENTITY_COLLECTION,
    SHARED_BY,
    embed_texts,
    entity_text,
    open_collections,
    relation_text,
    text_hash,
)

#: facts written to a vector collection per upsert
UPSERT_BLOCK = 8192


def load_evidence_chunks(context: Any, chunk_ids: set[str]) -> dict[str, StoredChunk]:
    objects: ObjectStoreProtocol = context.store("objects")
    found: dict[str, StoredChunk] = {}
    for key in all_chunk_keys(context):
        if not objects.exists(key):
            continue
        for chunk in iter_chunks(objects, [key]):
            if chunk.id in chunk_ids:
                metadata = {k: v for k, v in chunk.provenance().items() if k != "member_spans"}
                found[chunk.id] = StoredChunk(chunk.id, chunk.document_id, chunk.text, metadata)
    return found


def drop_missing_evidence(context: Any, draft: GraphDraft, chunks: Mapping[str, StoredChunk]) -> GraphDraft:
    def keep(kind: str, fact: Any) -> Any | None:
        missing = [e.chunk_id for e in fact.evidence if e.chunk_id not in chunks]
        if not missing:
            return fact
        remaining = tuple(e for e in fact.evidence if e.chunk_id in chunks)
        label = getattr(fact, "name", "") or fact.id
        context.report(
            "missing_evidence_chunk",
            f"{kind} {label!r} cites chunk(s) {', '.join(missing[:5])} that no longer exist.",
            subject=(kind, fact.id),
            action="dropped_evidence" if remaining else "dropped_fact",
            outcome="The fact keeps its other evidence." if remaining else "The fact was not written: nothing supports it.",
            details={"missing_chunks": len(missing)},
        )
        return attrs.evolve(fact, evidence=remaining) if remaining else None

    entities = tuple(e for e in (keep("entity", e) for e in draft.entities) if e is not None)
    kept_ids = {e.id for e in entities}
    relations = tuple(
        r for r in (keep("relation", r) for r in draft.relations)
        if r is not None and r.source_id in kept_ids and r.target_id in kept_ids
    )
    return GraphDraft(entities=entities, relations=relations)


def vector_deleter(entity_collection: Any, relation_collection: Any):
    """The ``on_orphans`` handler: vector deletes run inside the SQLite transaction; a failure rolls it back."""

    def delete(removed: RemovedFacts) -> None:
        if entity_collection is not None and removed.entity_ids:
            entity_collection.delete(list(removed.entity_ids))
        if relation_collection is not None and removed.relation_ids:
            relation_collection.delete(list(removed.relation_ids))

    return delete


async def write_draft(
    context: Any,
    draft: GraphDraft,
    *,
    precomputed: Mapping[str, np.ndarray] | None = None,
    known_existing: Sequence[str] = (),
    embed_descriptions: bool = True,
    concurrency: int = EMBED_CONCURRENCY,
) -> None:
    graph: GraphStore = context.store("graph")
    embedder = context.embedding_model()
    vector_store = context.store("vector")
    entity_collection, relation_collection = open_collections(vector_store, embedder.dimension)

    chunk_ids = {e.chunk_id for fact in (*draft.entities, *draft.relations) for e in fact.evidence}
    chunks = await in_thread(load_evidence_chunks, context, chunk_ids)
    draft = drop_missing_evidence(context, draft, chunks)
    # facts from these documents in an earlier build are replaced by what they say now
    replaced = list(context.document_ids)
    removed = await asyncio.to_thread(
        graph.write_draft, draft, list(chunks.values()), replace_documents=replaced,
        on_orphans=vector_deleter(entity_collection, relation_collection),
    )
    context.count("entities_removed", len(removed.entity_ids))
    context.count("relations_removed", len(removed.relation_ids))

    entity_ids, relation_ids = [e.id for e in draft.entities], [r.id for r in draft.relations]
    # memory: the draft and the evidence texts are written; entities, then relations, are read back one kind at a time
    del draft, chunks

    def described(description: str) -> str:
        return description if embed_descriptions else ""

    stored_entities = await in_thread(graph.get_entities, entity_ids)
    entity_texts = {i: entity_text(e.name, e.type, described(e.description)) for i, e in stored_entities.items()}
    entity_metadata = {i: {"entity_id": i, "name": e.name, "type": e.type} for i, e in stored_entities.items()}
    context.count("entities_written", len(stored_entities))
    del stored_entities
    await _upsert_changed(context, embedder, entity_collection, entity_texts, entity_metadata, precomputed or {}, "entities", concurrency)
    del entity_texts, entity_metadata, entity_collection
    release = getattr(vector_store, "release_collection", None)
    if release is not None:  # the entity index (97 MB at 10k chunks) need not sit beside the relations being embedded
        await asyncio.to_thread(release, ENTITY_COLLECTION)

    stored_relations = await in_thread(graph.get_relations, relation_ids)
    endpoint_names = {
        e.id: e.name for e in (await in_thread(
            graph.get_entities, list({i for r in stored_relations.values() for i in (r.source_id, r.target_id)})
        )).values()
    }
    relation_texts = {
        i: relation_text(endpoint_names.get(r.source_id, ""), r.name or r.type, endpoint_names.get(r.target_id, ""),
                         r.description, relation_type=r.type, with_description=embed_descriptions)
        for i, r in stored_relations.items()
    }
    relation_metadata = {
        i: {"relation_id": i, "source_id": r.source_id, "target_id": r.target_id, "type": r.type} for i, r in stored_relations.items()
    }
    context.count("relations_written", len(stored_relations))
    del stored_relations, endpoint_names
    carriers = text_carriers(relation_texts)
    sharing = [i for members in carriers.values() for i in members[1:]]
    # a knowledge base written before kept a vector per relation: those of the relations that now share one go
    await asyncio.to_thread(relation_collection.delete, sharing)
    context.count("relations_sharing_a_vector", len(sharing))
    carrier_metadata = {
        carrier: {**relation_metadata[carrier], SHARED_BY: members} if len(members) > 1 else relation_metadata[carrier]
        for carrier, members in carriers.items()
    }
    await _upsert_changed(context, embedder, relation_collection, {i: relation_texts[i] for i in carriers}, carrier_metadata, {},
                          "relations", concurrency)


def text_carriers(texts: Mapping[str, str]) -> dict[str, list[str]]:
    """carrier id -> the ids sharing its text (the carrier first): the first id, in id order, of each distinct text.

    Relations with one text have one vector, stored under the carrier's id with the
    others' ids in its metadata (``shared_by``). The nlp extractor's co-occurrences of
    one sentence all embed that sentence (at 10k chunks, 94,766 relations have 19,367
    texts): a vector each made every search scan five times the vectors it needs.
    """
    members: dict[str, list[str]] = {}
    for relation_id in sorted(texts):
        members.setdefault(texts[relation_id], []).append(relation_id)
    return {ids[0]: ids for ids in members.values()}


async def _upsert_changed(context: Any, embedder: Any, collection: Any, texts: Mapping[str, str], metadata: Mapping[str, dict[str, Any]],
                          precomputed: Mapping[str, np.ndarray], label: str, concurrency: int) -> None:
    ids = sorted(texts)
    if not ids:
        return
    hashes = {i: text_hash(texts[i]) for i in ids}
    stored = await in_thread(collection.get_metadata, ids)
    # a vector whose text or metadata changed (a relation's shared_by) is written again; the graph cache
    # keeps the text's vector, so a new metadata alone costs no model call
    stale = [i for i in ids if stored.get(i) != {**metadata[i], "text_hash": hashes[i]}]
    context.count(f"{label}_vectors_reused", len(ids) - len(stale))
    if not stale:
        return
    reuse = [i for i in stale if i in precomputed]
    fresh = [i for i in stale if i not in precomputed]

    async def upsert(block: list[str], vectors: np.ndarray) -> None:
        await asyncio.to_thread(collection.upsert, block, vectors, [{**metadata[i], "text_hash": hashes[i]} for i in block])

    # a block at a time, embedded then written: never the vectors of every fact at once (at 10k chunks the
    # entities' were 85 MB, held beside the index they were being added to)
    for start in range(0, len(reuse), UPSERT_BLOCK):
        block = reuse[start : start + UPSERT_BLOCK]
        await upsert(block, np.stack([precomputed[i] for i in block]))
    for start in range(0, len(fresh), UPSERT_BLOCK):
        block = fresh[start : start + UPSERT_BLOCK]
        # a text repeated in a later block is a graph-cache hit there: each distinct text is embedded once
        await upsert(block, await embed_texts(embedder, [texts[i] for i in block], context=context, concurrency=concurrency))
    context.count(f"{label}_embedded", len(fresh))
