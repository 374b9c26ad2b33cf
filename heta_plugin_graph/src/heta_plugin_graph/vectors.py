"""Entity and relation vectors in ``stores.vector``: collection names, metadata, batched embedding."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
from heta_framework.kb.documents import content_hash

ENTITY_COLLECTION = "graph_entities"
RELATION_COLLECTION = "graph_relations"
EMBED_BATCH = 256


async def embed_texts(embedder: Any, texts: Sequence[str], *, context: Any = None, batch_size: int = EMBED_BATCH) -> np.ndarray:
    """Embed in batches; the time spent is reported as ``embedding_ms`` so nobody mistakes it for extraction."""
    started = time.perf_counter()
    parts = [np.asarray(await embedder.embed(list(texts[i : i + batch_size])), dtype=np.float32) for i in range(0, len(texts), batch_size)]
    dimension = getattr(embedder, "dimension", 0) or 0
    vectors = np.concatenate(parts) if parts else np.zeros((0, dimension), dtype=np.float32)
    if context is not None:
        context.count("embedded_texts", len(texts))
        context.count("embedding_ms", int((time.perf_counter() - started) * 1000))
    return vectors


def text_hash(text: str) -> str:
    return content_hash(text)[:16]


def entity_text(name: str, type_name: str, description: str) -> str:
    # NFKC: embedding models tokenise full-width text ("ＯｐｅｎＡＩ") into noise
    text = f"{name} ({type_name}): {description}" if description else f"{name} ({type_name})"
    return unicodedata.normalize("NFKC", text)


def relation_text(source_name: str, relation_name: str, target_name: str, description: str) -> str:
    head = f"{source_name} {relation_name} {target_name}"
    return unicodedata.normalize("NFKC", f"{head}: {description}" if description else head)


def open_collections(vector_store: Any, dimension: int) -> tuple[Any, Any]:
    return vector_store.collection(ENTITY_COLLECTION, dimension=dimension), vector_store.collection(RELATION_COLLECTION, dimension=dimension)


def existing_collections(vector_store: Any) -> tuple[Any | None, Any | None]:
    """The graph collections if they exist (deletion must not create them)."""
    entity = vector_store.collection(ENTITY_COLLECTION) if vector_store.has_collection(ENTITY_COLLECTION) else None
    relation = vector_store.collection(RELATION_COLLECTION) if vector_store.has_collection(RELATION_COLLECTION) else None
    return entity, relation
