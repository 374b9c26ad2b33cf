"""Entity and relation vectors in ``stores.vector``: collection names, metadata, batched embedding."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
from heta_framework.kb.documents import content_hash

from heta_plugin_graph.extraction.nlp import CO_OCCURS

ENTITY_COLLECTION = "graph_entities"
RELATION_COLLECTION = "graph_relations"
EMBED_BATCH = 256


async def embed_texts(embedder: Any, texts: Sequence[str], *, context: Any = None, batch_size: int = EMBED_BATCH) -> np.ndarray:
    """One vector per text, each distinct text embedded once, in batches.

    Facts often share their text (every co-occurrence from one sentence embeds
    that sentence). The time spent is reported as ``embedding_ms`` so nobody
    mistakes it for extraction.
    """
    started = time.perf_counter()
    distinct = list(dict.fromkeys(texts))
    if not distinct:
        return np.zeros((0, getattr(embedder, "dimension", 0) or 0), dtype=np.float32)
    # one matrix filled batch by batch: no list of parts to concatenate (a copy of every vector at 10k chunks)
    matrix: np.ndarray | None = None
    for start in range(0, len(distinct), batch_size):
        part = np.asarray(await embedder.embed(distinct[start : start + batch_size]), dtype=np.float32)
        if matrix is None:
            matrix = np.empty((len(distinct), part.shape[1]), dtype=np.float32)
        matrix[start : start + len(part)] = part
    assert matrix is not None
    if len(distinct) == len(texts):
        vectors = matrix  # every text distinct (most entity texts): already in order
    else:
        row_of = {text: row for row, text in enumerate(distinct)}
        vectors = matrix[[row_of[text] for text in texts]]
    if context is not None:
        context.count("embedded_texts", len(distinct))
        context.count("embedding_ms", int((time.perf_counter() - started) * 1000))
    return vectors


def text_hash(text: str) -> str:
    return content_hash(text)[:16]


def entity_text(name: str, type_name: str, description: str) -> str:
    # NFKC: embedding models tokenise full-width text ("ＯｐｅｎＡＩ") into noise
    text = f"{name} ({type_name}): {description}" if description else f"{name} ({type_name})"
    return unicodedata.normalize("NFKC", text)


def relation_text(source_name: str, relation_name: str, target_name: str, description: str, *,
                  relation_type: str = "", with_description: bool = True) -> str:
    """What a relation's vector embeds: ``A relation B``, with ``: description`` when descriptions are embedded.

    A co-occurrence (the nlp extractor's relation) has no predicate: all it says is
    that two names share the sentence in its description. Its vector is that
    sentence's, whether or not descriptions are embedded: one sentence yields
    several co-occurrences and is embedded once, which costs less than embedding
    every "A co-occurs with B" and matches what the sentence is about.
    """
    if relation_type == CO_OCCURS and description:
        return unicodedata.normalize("NFKC", description)
    head = f"{source_name} {relation_name} {target_name}"
    return unicodedata.normalize("NFKC", f"{head}: {description}" if with_description and description else head)


def open_collections(vector_store: Any, dimension: int) -> tuple[Any, Any]:
    return vector_store.collection(ENTITY_COLLECTION, dimension=dimension), vector_store.collection(RELATION_COLLECTION, dimension=dimension)


def existing_collections(vector_store: Any) -> tuple[Any | None, Any | None]:
    """The graph collections if they exist (deletion must not create them)."""
    entity = vector_store.collection(ENTITY_COLLECTION) if vector_store.has_collection(ENTITY_COLLECTION) else None
    relation = vector_store.collection(RELATION_COLLECTION) if vector_store.has_collection(RELATION_COLLECTION) else None
    return entity, relation
