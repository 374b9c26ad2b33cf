"""EmbedChunks + IndexVectors + vector_search through a real KnowledgeBase, the real MiniLM model and real FAISS files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from heta_framework.common.models import EmbeddingModel
from heta_framework.errors import ModelError, StepFailedError
from heta_framework.kb import KnowledgeBase, KnowledgeModels, SourceDocument, StoreConfig

MODEL = "local/all-MiniLM-L6-v2"


def _stats(report, step):
    return next(s.stats for s in report.steps if s.name == step)


async def test_end_to_end_on_real_documents(tmp_path, registry, vector_recipe, real_documents):
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(), registry=registry)
    report = await kb.build([real_documents])
    # this registry reads neither the workbook (heta-plugin-sheets), the deck (heta-plugin-office) nor the image
    # (no vision model or OCR)
    assert sorted(issue.code for issue in report.issues) == ["needs_vision_model", "unsupported_document_type", "unsupported_document_type"]
    assert "vector_search" in kb.available_queries
    assert _stats(report, "embed_chunks")["embedded_texts"] >= 49  # one or more chunks per text document

    response = await kb.query("who discovered penicillin", mode="vector_search", top_k=5)
    assert len(response.results) == 5
    top = response.results[0]
    assert top.metadata["name"].startswith(("penicillin", "alexander-fleming"))
    assert top.sources == ("vector_search",) and top.kind == "chunk"
    assert 0 < top.score <= 1.0001 and [r.score for r in response.results] == sorted((r.score for r in response.results), reverse=True)
    parsed = json.loads((tmp_path / "kb" / "objects" / "parsed" / f"{top.document_id}.json").read_text())
    assert parsed["text"][top.metadata["start"] : top.metadata["end"]] == top.text  # provenance is exact
    assert top.metadata["source"].startswith(str(real_documents.resolve()))
    assert "text" not in top.metadata

    asset = next(a for a in kb.search_assets if a.kind == "chunk_vector_index")
    assert (asset.name, asset.store, asset.metadata["collection"]) == ("chunks", "stores.vector", "chunks")
    assert (asset.metadata["embedding_model"], asset.metadata["dimension"]) == (MODEL, 384)


async def test_index_reopens_after_load_without_rebuilding(tmp_path, registry, vector_recipe, docs_dir):
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(), registry=registry)
    await kb.build([docs_dir])
    before = await kb.query("marine mammals breathing", mode="vector_search", top_k=3)
    kb.close()
    assert (tmp_path / "kb" / "vectors" / "chunks" / "index.faiss").exists()
    assert (tmp_path / "kb" / "embeddings" / "cache.sqlite").exists()

    reopened = KnowledgeBase.load(tmp_path / "kb", registry=registry)
    after = await reopened.query("marine mammals breathing", mode="vector_search", top_k=3)
    assert [(r.id, round(r.score, 5)) for r in after.results] == [(r.id, round(r.score, 5)) for r in before.results]
    assert after.results[0].metadata["name"] == "whales.md"


async def test_rebuild_hits_the_cache_and_calls_the_model_zero_times(tmp_path, counting_registry, counting, vector_recipe, docs_dir):
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(model="counting/all-MiniLM-L6-v2"), registry=counting_registry)
    first = await kb.build([docs_dir])
    assert counting.calls == _stats(first, "embed_chunks")["embedding_calls"] >= 1
    assert counting.texts == _stats(first, "embed_chunks")["embedded_texts"] == 3
    assert _stats(first, "embed_chunks")["cache_hits"] == 0

    counting.calls = counting.texts = 0
    second = await kb.build(rebuild=True)
    stats = _stats(second, "embed_chunks")
    assert counting.calls == 0 and stats.get("embedding_calls", 0) == 0 and stats.get("embedded_texts", 0) == 0
    assert stats["cache_hits"] == 3
    response = await kb.query("foxes", mode="vector_search", top_k=1)  # the query itself is one call
    assert response.results[0].metadata["name"] == "fox.txt" and counting.calls == 1

    # a new knowledge base would embed again, but a new document beside known ones embeds only itself
    counting.calls = counting.texts = 0
    third = await kb.build([SourceDocument(text="Penguins are flightless birds of the southern hemisphere.", id="penguins")])
    assert counting.texts == 1 and _stats(third, "embed_chunks")["embedded_texts"] == 1


async def test_resumed_build_reembeds_nothing_already_embedded(tmp_path, counting_registry, counting, vector_recipe, docs_dir):
    """IndexVectors fails once (a broken store); the resumed build skips EmbedChunks and needs no model call."""
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(model="counting/all-MiniLM-L6-v2"), registry=counting_registry)
    (tmp_path / "kb" / "vectors").write_text("not a folder")  # the vector store cannot create its collection folder
    with pytest.raises(StepFailedError, match="index_vectors"):
        await kb.build([docs_dir])
    assert counting.texts == 3
    (tmp_path / "kb" / "vectors").unlink()
    counting.calls = counting.texts = 0
    kb.close()
    resumed = KnowledgeBase.load(tmp_path / "kb", registry=counting_registry)
    report = await resumed.build()
    assert report.resumed and counting.calls == 0
    assert [s.status for s in report.steps if s.name == "embed_chunks"] == ["skipped"]
    assert (await resumed.query("whales", mode="vector_search", top_k=1)).results[0].metadata["name"] == "whales.md"


async def test_filters_through_kb_query(tmp_path, registry, vector_recipe, docs_dir):
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(), registry=registry)
    await kb.build([docs_dir])
    everything = await kb.query("animals", mode="vector_search", top_k=10)
    assert {r.metadata["name"] for r in everything.results} == {"fox.txt", "whales.md", "shanghai.txt"}
    only = await kb.query("animals", mode="vector_search", top_k=10, filters={"name": "whales.md"})
    assert [r.metadata["name"] for r in only.results] == ["whales.md"]
    fox_id = next(r.document_id for r in everything.results if r.metadata["name"] == "fox.txt")
    some = await kb.query("animals", mode="vector_search", filters={"document_id": [fox_id, "unknown"]})
    assert [r.document_id for r in some.results] == [fox_id]
    strict = await kb.query("animals", mode="vector_search", options={"min_score": 0.99})
    assert strict.results == ()


async def test_deleted_and_changed_documents_leave_no_vectors(tmp_path, registry, vector_recipe):
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(), registry=registry)
    await kb.build([
        SourceDocument(text="Volcanoes erupt molten lava and ash.", id="volcano"),
        SourceDocument(text="Glaciers are slow rivers of ice.", id="glacier"),
    ])
    await kb.delete_documents(["volcano"])
    response = await kb.query("lava eruption", mode="vector_search", top_k=10)
    assert [r.document_id for r in response.results] == ["glacier"]

    await kb.build([SourceDocument(text="Glaciers carve valleys. " * 80, id="glacier")])  # changed content, more chunks
    response = await kb.query("glacier", mode="vector_search", top_k=50)
    assert {r.document_id for r in response.results} == {"glacier"}
    assert all("carve valleys" in r.text for r in response.results)  # the old chunk is gone


async def test_delete_removes_the_files_the_steps_listed(tmp_path, registry, vector_recipe, docs_dir):
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(), registry=registry)
    await kb.build([docs_dir])
    plan = kb.delete(dry_run=True)
    assert "vectors/chunks" in plan.paths and "embeddings/cache.sqlite" in plan.paths
    kb.delete()
    assert not (tmp_path / "kb" / "vectors" / "chunks").exists()
    assert not (tmp_path / "kb" / "embeddings" / "cache.sqlite").exists()


async def test_query_with_another_embedding_model_is_refused(tmp_path, registry, vector_recipe, docs_dir, local_model):
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(), registry=registry)
    await kb.build([docs_dir])
    kb.close()
    other = KnowledgeModels(embedding=EmbeddingModel(model_name=f"local/{local_model.folder}"))
    reloaded = KnowledgeBase.load(tmp_path / "kb", registry=registry, models=other)
    with pytest.raises(ModelError, match="built with embedding model 'local/all-MiniLM-L6-v2'"):
        await reloaded.query("fox", mode="vector_search")
    vector = (await local_model.embed(["fox"]))[0].tolist()  # a precomputed vector needs no model at all
    response = await reloaded.query("ignored", mode="vector_search", top_k=1, options={"vector": vector})
    assert response.results[0].metadata["name"] == "fox.txt"


async def test_approximate_index_from_the_recipe(tmp_path, registry, vector_recipe, real_documents):
    stores = {"vector": StoreConfig(type="faiss", options={"index": "hnsw", "hnsw_m": 16, "ef_search": 32})}
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(stores=stores), registry=registry)
    await kb.build([real_documents])
    collection = kb.get_component("stores.vector").collection("chunks")
    assert collection.index_kind == "hnsw"
    response = await kb.query("who discovered penicillin", mode="vector_search", top_k=3)
    assert response.results[0].metadata["name"].startswith(("penicillin", "alexander-fleming"))
    manifest = json.loads((tmp_path / "kb" / "vectors" / "chunks" / "collection.json").read_text())
    assert manifest["current_index"] == "hnsw"


def test_unknown_store_options_name_the_field(tmp_path, registry, vector_recipe):
    from heta_framework.errors import RecipeError

    stores = {"vector": StoreConfig(type="faiss", options={"index": "ivf", "nprobes": 4})}
    with pytest.raises(RecipeError, match="nprobes"):
        KnowledgeBase.create(tmp_path / "kb", vector_recipe(stores=stores), registry=registry)


async def test_embedding_artifact_is_json(tmp_path, registry, vector_recipe, docs_dir):
    kb = KnowledgeBase.create(tmp_path / "kb", vector_recipe(), registry=registry)
    await kb.build([docs_dir])
    record = json.loads((tmp_path / "kb" / "run_record.json").read_text())
    embeddings = record["step_artifacts"]["embed_chunks"]["embeddings"]
    assert embeddings["model"] == MODEL and embeddings["dimension"] == 384 and embeddings["cache"] == "embeddings/cache.sqlite"
    result = record["step_artifacts"]["index_vectors"]["index_vectors_result"]
    assert result["vectors"] == 3 and result["embedding_model"] == MODEL
    assert np.isclose(np.linalg.norm((await kb.get_component("models.embedding").embed(["x"]))[0]), 1.0)
