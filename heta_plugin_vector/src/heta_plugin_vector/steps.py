"""``EmbedChunks`` (chunks -> cached embeddings) and ``IndexVectors`` (embeddings -> ``chunks`` collection)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
import numpy as np
from heta_framework.common.validators import positive_whole_number
from heta_framework.errors import ModelError
from heta_framework.kb.documents import content_hash, iter_chunks
from heta_framework.kb.search import SearchAsset
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, model_ref, store_ref
from heta_framework.kb.stores import ObjectStoreProtocol, VectorStoreProtocol

#: where a folder knowledge base keeps the ``embeddings`` cache (``FolderState``: ``<name>/cache.sqlite``); a server state has no file
CACHE_PATH = "embeddings/cache.sqlite"
CHUNK_COLLECTION = "chunks"
CHUNK_VECTOR_ASSET = SearchAsset(
    kind="chunk_vector_index",
    name="chunks",
    store="stores.vector",
    metadata={"collection": CHUNK_COLLECTION},
)



def _sqlite_files(path: str) -> tuple[str, ...]:
    return (path, f"{path}-wal", f"{path}-shm")


@attrs.frozen
class EmbedChunks:
    """Embed every chunk of the run with ``models.embedding``, through a persistent cache.

    Texts are deduplicated, looked up in the cache (model name + sha256 of the
    text) and only the missing ones are sent to the model, ``batch_size`` at a
    time, longest first (less padding per batch). Each batch is committed to the
    cache as soon as it returns, so an interrupted build loses nothing.
    Up to ``concurrency`` batches are in flight at once: a remote model's
    round trip overlaps the others' (a local model merges them into one call).
    Statistics: ``embedded_texts``, ``embedding_calls``, ``cache_hits``.
    """

    name: ClassVar[str] = "embed_chunks"

    batch_size: int = attrs.field(default=64, validator=positive_whole_number)
    #: batches sent to the model at the same time (a bound, so a remote API is not flooded)
    concurrency: int = attrs.field(default=4, validator=positive_whole_number)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(
            components=frozenset({model_ref("embedding"), store_ref("objects")}),
            artifacts=frozenset({"chunk_keys"}),
        )

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(artifacts=frozenset({"embeddings"}))

    async def run(self, context: StepContextProtocol) -> None:
        from heta_plugin_vector.cache import CACHE_NAME, EmbeddingCache

        client = context.embedding_model()
        objects: ObjectStoreProtocol = context.store("objects")
        chunk_keys = list(context.get_artifact("chunk_keys"))
        model = client.model_name
        texts: dict[str, str] = {}
        for chunk in iter_chunks(objects, chunk_keys):
            if not chunk.text.strip():
                context.report(
                    "empty_chunk", "The chunk has no text to embed.", subject=("chunk", chunk.id),
                    severity="info", action="skipped_chunk", outcome="The chunk has no vector.",
                )
                continue
            texts.setdefault(content_hash(chunk.text), chunk.text)
        with EmbeddingCache(context.cache(CACHE_NAME)) as cache:
            known = await asyncio.to_thread(cache.known, model, list(texts))
            missing = sorted((h for h in texts if h not in known), key=lambda h: len(texts[h]), reverse=True)
            context.count("cache_hits", len(texts) - len(missing))
            progress = context.progress("embed chunks", len(missing))
            dimensions: list[int] = []
            gate = asyncio.Semaphore(self.concurrency)

            async def embed_batch(batch: list[str]) -> None:
                async with gate:
                    vectors = _checked(await client.embed([texts[h] for h in batch]), len(batch), model)
                    dimensions.append(vectors.shape[1])
                    await asyncio.to_thread(cache.put_many, model, batch, vectors)
                context.count("embedding_calls")
                context.count("embedded_texts", len(batch))
                progress.advance(len(batch))

            tasks = [asyncio.ensure_future(embed_batch(missing[start : start + self.batch_size]))
                     for start in range(0, len(missing), self.batch_size)]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                # the first failure is raised as it is; the other batches stop, and every one that finished is cached
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
            finally:
                progress.close()
            dimension = (dimensions[0] if dimensions else None) or cache.dimension(model, list(known)[:1]) or int(client.dimension)
        context.set_artifact(
            "embeddings", {"model": model, "dimension": int(dimension), "cache": CACHE_PATH, "chunk_keys": chunk_keys}
        )

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        path = (artifacts.get("embeddings") or {}).get("cache", CACHE_PATH)
        return StepCleanupPlan(paths=_sqlite_files(path), description="embedding cache")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        """Nothing to do: the cache is keyed by text, not by document, and is kept so a returning text costs nothing.

        The document's vectors live in the index and ``IndexVectors.delete_documents`` removes them.
        """


def _checked(vectors: Any, expected: int, model: str) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[0] != expected:
        raise ModelError(
            f"Embedding model {model!r} returned an array of shape {array.shape} for {expected} texts; "
            "an embedding provider must return one row per text. Check the provider plugin."
        )
    if not np.isfinite(array).all():
        raise ModelError(f"Embedding model {model!r} returned NaN or infinite values; check the model files or provider.")
    return array


@attrs.frozen
class IndexVectors:
    """Put the run's chunk embeddings into the ``chunks`` collection of ``stores.vector``; unlocks ``vector_search``.

    Each vector's metadata is the chunk's provenance plus its ``text``, so a search
    needs no second lookup. The run's documents are first cleared from the
    collection, so a rebuilt document leaves no stale chunks behind.
    """

    name: ClassVar[str] = "index_vectors"

    batch_size: int = attrs.field(default=2048, validator=positive_whole_number)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(
            components=frozenset({store_ref("vector"), store_ref("objects")}),
            artifacts=frozenset({"embeddings"}),
        )

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(
            artifacts=frozenset({"index_vectors_result"}),
            queries=frozenset({"vector_search"}),
            search_assets=(CHUNK_VECTOR_ASSET,),
        )

    async def run(self, context: StepContextProtocol) -> None:
        from heta_plugin_vector.cache import CACHE_NAME, EmbeddingCache

        embeddings = context.get_artifact("embeddings")
        model = embeddings["model"]
        store: VectorStoreProtocol = context.store("vector")
        objects: ObjectStoreProtocol = context.store("objects")
        collection = store.collection(CHUNK_COLLECTION, dimension=embeddings["dimension"])
        if context.document_ids:
            await asyncio.to_thread(collection.delete_where, {"document_id": list(context.document_ids)})
        indexed = 0
        with EmbeddingCache(context.cache(CACHE_NAME)) as cache:
            batch: list[Any] = []

            async def write(chunks: list[Any]) -> int:
                hashes = [content_hash(c.text) for c in chunks]
                found = await asyncio.to_thread(cache.get_many, model, hashes)
                kept = [(c, found[h]) for c, h in zip(chunks, hashes) if h in found]
                for chunk, text_hash in zip(chunks, hashes):
                    if text_hash not in found and chunk.text.strip():
                        context.report(
                            "missing_embedding", "No cached embedding for this chunk; run embed_chunks again.",
                            subject=("chunk", chunk.id), action="skipped_chunk", outcome="The chunk is not searchable by vector.",
                        )
                if not kept:
                    return 0
                await asyncio.to_thread(
                    collection.upsert,
                    [c.id for c, _ in kept],
                    np.stack([v for _, v in kept]),
                    [{**c.provenance(), "text": c.text} for c, _ in kept],
                )
                return len(kept)

            for chunk in iter_chunks(objects, embeddings["chunk_keys"]):
                batch.append(chunk)
                if len(batch) >= self.batch_size:
                    indexed += await write(batch)
                    batch = []
            if batch:
                indexed += await write(batch)
        context.count("vectors_indexed", indexed)
        context.describe_asset(
            CHUNK_VECTOR_ASSET.kind,
            CHUNK_VECTOR_ASSET.name,
            {"embedding_model": model, "dimension": int(embeddings["dimension"])},
        )
        context.set_artifact(
            "index_vectors_result",
            {
                "collection": CHUNK_COLLECTION,
                "embedding_model": model,
                "dimension": int(embeddings["dimension"]),
                "vectors": len(collection),
                "paths": store.relative_paths(CHUNK_COLLECTION),
            },
        )

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        result = artifacts.get("index_vectors_result") or {}
        return StepCleanupPlan(paths=tuple(result.get("paths", ("vectors/chunks",))), description="chunk vector collection")

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        store: VectorStoreProtocol = context.store("vector")
        if store.has_collection(CHUNK_COLLECTION):
            collection = store.collection(CHUNK_COLLECTION)
            await asyncio.to_thread(collection.delete_where, {"document_id": list(document_ids)})
