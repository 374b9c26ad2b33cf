"""Entity and relation vectors in ``stores.vector``: collection names, metadata, batched embedding."""

from __future__ import annotations

import asyncio
import time
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
from heta_framework.common.tasks import gather_or_cancel
from heta_framework.kb.documents import content_hash

from heta_plugin_graph.extraction.nlp import CO_OCCURS
from heta_plugin_graph.normalize import normalize_type

ENTITY_COLLECTION = "graph_entities"
RELATION_COLLECTION = "graph_relations"
EMBED_BATCH = 256
#: batches in flight at once by default: a remote provider answers several calls at a time (as EmbedChunks' option)
EMBED_CONCURRENCY = 4
GRAPH_CACHE_NAME = "graph_embeddings"
#: metadata key of a relation vector that several relations share (their ids, the carrier's first)
SHARED_BY = "shared_by"
#: types that say only that a name is a name: ``concept`` (what an empty type becomes) and ``named_entity`` (the nlp
#: extractor's capitalised phrase). Entity vectors leave them out: "(named_entity)" is five of the nine tokens of
#: "Pacific Ocean (named_entity)", the same in every name, and the model's time is per token (at 10k chunks the
#: names took 120 s without them against 166 s with, and heta_graph_search scored 0.657 against 0.653)
UNINFORMATIVE_TYPES = frozenset({"concept", "named_entity"})


def relations_of_hit(hit: Any) -> list[str]:
    """The ids of the relations a hit in the relation collection stands for: the ones sharing its vector, or itself."""
    return list(hit.metadata.get(SHARED_BY) or [hit.id])


def _cache_key(model: str, text: str) -> str:
    return f"{model}\x1f{content_hash(text)}"


async def embed_texts(embedder: Any, texts: Sequence[str], *, context: Any = None, batch_size: int = EMBED_BATCH,
                      concurrency: int = EMBED_CONCURRENCY) -> np.ndarray:
    """One vector per text (``embed_distinct``'s rows in the texts' order)."""
    matrix, rows = await embed_distinct(embedder, texts, context=context, batch_size=batch_size, concurrency=concurrency)
    return matrix if len(rows) == len(matrix) else matrix[rows]


async def embed_distinct(embedder: Any, texts: Sequence[str], *, context: Any = None, batch_size: int = EMBED_BATCH,
                         concurrency: int = EMBED_CONCURRENCY) -> tuple[np.ndarray, np.ndarray]:
    """``(matrix, rows)``: one vector per distinct text, and ``matrix[rows[i]]`` is ``texts[i]``'s.

    Each distinct text is embedded once, in batches, up to ``concurrency`` batches in flight.
    Callers that write in blocks expand ``matrix[rows[block]]`` a block at a time: at
    10k chunks, 95k relations share 19k sentences, and the expanded matrix was 145 MB.

    Facts often share their text (every co-occurrence from one sentence embeds
    that sentence). With a step context, vectors are kept in the knowledge
    base's ``graph_embeddings`` cache keyed by model + text, batch by batch, so
    a build resumed after a kill (or one whose vectors were lost) embeds no
    graph text twice. The time spent is reported as ``embedding_ms`` so nobody
    mistakes it for extraction; ``graph_cache_hits`` counts the texts the cache gave.
    """
    started = time.perf_counter()
    row_of: dict[str, int] = {}
    rows = np.fromiter((row_of.setdefault(text, len(row_of)) for text in texts), dtype=np.int64, count=len(texts))
    distinct = list(row_of)
    if not distinct:
        return np.zeros((0, getattr(embedder, "dimension", 0) or 0), dtype=np.float32), rows
    cache = context.cache(GRAPH_CACHE_NAME) if context is not None and hasattr(context, "cache") else None
    model = str(getattr(embedder, "model_name", "") or type(embedder).__name__)
    keys = [_cache_key(model, text) for text in distinct]
    found = cache.get_many(keys) if cache is not None else {}
    missing = [row for row, key in enumerate(keys) if key not in found]
    # one matrix filled batch by batch: no list of parts to concatenate (a copy of every vector at 10k chunks)
    matrix: np.ndarray | None = None
    for row, key in enumerate(keys):
        if key in found:
            vector = np.frombuffer(found[key], dtype=np.float32)
            if matrix is None:
                matrix = np.empty((len(distinct), vector.shape[0]), dtype=np.float32)
            matrix[row] = vector
    if concurrency < 1:
        raise ValueError(f"concurrency must be a whole number >= 1, got {concurrency!r}")
    gate = asyncio.Semaphore(concurrency)

    async def embed_batch(rows: list[int]) -> None:
        nonlocal matrix
        # a remote provider waits on the network: several batches in flight; a local one serialises in its encoder
        async with gate:
            part = np.asarray(await embedder.embed([distinct[r] for r in rows]), dtype=np.float32)
        if matrix is None:
            matrix = np.empty((len(distinct), part.shape[1]), dtype=np.float32)
        matrix[rows] = part  # each batch writes its own rows: the order of the texts holds whatever finishes first
        if cache is not None:
            cache.put_many({keys[r]: np.ascontiguousarray(part[i]).tobytes() for i, r in enumerate(rows)})

    # the first failure is raised as it is; the other batches stop, and every one that finished is cached
    await gather_or_cancel(embed_batch(missing[start : start + batch_size]) for start in range(0, len(missing), batch_size))
    assert matrix is not None
    if context is not None:
        context.count("embedded_texts", len(missing))
        context.count("graph_cache_hits", len(distinct) - len(missing))
        context.count("embedding_ms", int((time.perf_counter() - started) * 1000))
    return matrix, rows


def text_hash(text: str) -> str:
    return content_hash(text)[:16]


def entity_label(name: str, type_name: str) -> str:
    """``name (type)``, or the name alone when the type says only that it is a name (``UNINFORMATIVE_TYPES``)."""
    return name if normalize_type(type_name) in UNINFORMATIVE_TYPES else f"{name} ({type_name})"


def entity_text(name: str, type_name: str, description: str) -> str:
    label = entity_label(name, type_name)
    # NFKC: embedding models tokenise full-width text ("ＯｐｅｎＡＩ") into noise
    return unicodedata.normalize("NFKC", f"{label}: {description}" if description else label)


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
