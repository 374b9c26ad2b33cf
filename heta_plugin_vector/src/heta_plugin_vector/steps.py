"""``EmbedChunks`` (chunks -> cached embeddings) and ``IndexVectors`` (embeddings -> ``chunks`` collection)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np
from heta_framework.common.validators import positive_whole_number
from heta_framework.errors import ModelError
from heta_framework.kb.documents import chunks_key, content_hash, iter_chunks
from heta_framework.kb.executor import BatchFailure, batched
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
        from heta_plugin_vector.model_language import check_model_language

        client = context.embedding_model()
        objects: ObjectStoreProtocol = context.store("objects")
        chunk_keys = list(context.get_artifact("chunk_keys"))
        model = client.model_name
        texts: dict[str, str] = {}
        documents_of_text: dict[str, set[str]] = {}
        for chunk in iter_chunks(objects, chunk_keys):
            if not chunk.text.strip():
                context.report(
                    "empty_chunk", "The chunk has no text to embed.", subject=("chunk", chunk.id),
                    severity="info", action="skipped_chunk", outcome="The chunk has no vector.",
                )
                continue
            text_hash = content_hash(chunk.text)
            texts.setdefault(text_hash, chunk.text)
            documents_of_text.setdefault(text_hash, set()).add(chunk.document_id)
        await asyncio.to_thread(check_model_language, context, client, list(texts.values()))
        with EmbeddingCache(context.cache(CACHE_NAME)) as cache:
            known = await asyncio.to_thread(cache.known, model, list(texts))
            missing = sorted((h for h in texts if h not in known), key=lambda h: len(texts[h]), reverse=True)
            context.count("cache_hits", len(texts) - len(missing))
            progress = context.progress("embed chunks", len(missing))
            dimensions: list[int] = []
            hash_batches = batched(missing, self.batch_size)

            async def cache_batch(index: int, result: Any) -> None:
                # on the driver, as each batch returns: a build stopped later keeps every batch that finished
                if isinstance(result, BatchFailure):
                    return
                batch = hash_batches[index]
                vectors = _checked(result, len(batch), model)
                dimensions.append(vectors.shape[1])
                await asyncio.to_thread(cache.put_many, model, list(batch), vectors)
                context.count("embedding_calls")
                context.count("embedded_texts", len(batch))
                progress.advance(len(batch))

            try:
                results = await context.map_batches(
                    EmbedTexts(), [[texts[h] for h in batch] for batch in hash_batches], on_result=cache_batch, limit=self.concurrency,
                )
            finally:
                progress.close()
            failed = [r for r in results if isinstance(r, BatchFailure)]
            if failed:
                _report_failed_batches(context, failed, [hash_batches[f.index] for f in failed], documents_of_text)
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


@attrs.frozen
class EmbedTexts:
    """A batch of texts -> their vectors with ``models.embedding``: the work ``EmbedChunks`` fans out
    (``context.map_batches``). It writes nothing; the step caches each batch as it returns."""

    model_key: str = "models.embedding"

    @property
    def key(self) -> str:
        return f"embed:{self.model_key}"

    @property
    def models(self) -> tuple[str, ...]:
        return (self.model_key,)

    def prepare(self, models: Mapping[str, Any]) -> Any:
        return models[self.model_key]

    async def run(self, client: Any, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(await client.embed(list(texts)), dtype=np.float32)


def _report_failed_batches(
    context: StepContextProtocol, failures: Sequence[BatchFailure], batches: Sequence[Sequence[str]], documents_of_text: Mapping[str, set[str]],
) -> None:
    """A batch whose embedding failed: its chunks get no vector this build, and their documents stay pending,
    so the next plain build embeds them again (the cache keeps every batch that worked)."""
    for failure, batch in zip(failures, batches):
        documents = sorted(set().union(*(documents_of_text[h] for h in batch)))
        for document_id in documents:
            context.retry_document(document_id)
        context.report(
            "embedding_failed", f"Embedding {len(batch)} text(s) failed: {failure.error}", subject=("batch", str(failure.index)),
            severity="error", action="skipped_chunks", outcome="Their chunks have no vector; the next build retries their documents.",
            details={"documents": ", ".join(documents), "attempts": failure.attempts},
        )
        context.count("embedding_failed_batches")


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

    async def preview_removal(self, context: StepContextProtocol, document_ids: list[str]) -> dict[str, int]:
        """The chunk vectors ``delete_documents`` would remove: the documents' chunks that have one."""
        store: VectorStoreProtocol = context.store("vector")
        if not store.has_collection(CHUNK_COLLECTION):
            return {}
        objects = context.store("objects")
        ids = [chunk["id"] for d in document_ids if objects.exists(key := chunks_key(d)) for chunk in objects.get_json(key)]
        present = await asyncio.to_thread(store.collection(CHUNK_COLLECTION).contains, ids) if ids else []
        return {"vectors": sum(present)}
