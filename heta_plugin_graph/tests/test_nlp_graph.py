"""The LLM-free graph: nlp extraction, the SQLite store, heta_graph_search, deletion, Chinese."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import heta_plugin_local
import pytest
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.kb.documents import chunks_key
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepRequirements, store_ref
from heta_framework.testing import inline_plugin, make_registry
from heta_plugin_graph.normalize import entity_id, normalize_name

import heta_plugin_graph
import heta_plugin_vector
from heta_plugin_graph import BuildGraph, ExtractEntities, ExtractRelations, HetaGraphProcedure

OCEAN = (
    "The Pacific Ocean is the largest ocean on Earth. Blue whales feed on krill in the Pacific Ocean. "
    "Coral reefs protect coastlines from storms."
)
RIVERS = "The Amazon River flows into the Atlantic Ocean. The Pacific Ocean borders South America on the west."
SHANGHAI = "上海市是中国的直辖市之一。长江在上海附近流入东海。上海港是世界上最繁忙的港口之一。"


def graph_recipe(models, base_steps, **procedure: Any) -> Recipe:
    return Recipe(models=models, steps=[*base_steps, HetaGraphProcedure(extractor="nlp", **procedure)])


async def build_kb(tmp_path, registry, recipe, documents) -> tuple[KnowledgeBase, Any]:
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    report = await kb.build(documents)
    return kb, report


def test_one_normalisation_for_width_case_and_spaces():
    assert normalize_name("ＯｐｅｎＡＩ") == normalize_name("openai") == normalize_name("  OPENAI\u3000") == "openai"
    assert normalize_name("New   York\tCity") == "new york city"
    assert normalize_name("Straße") == normalize_name("STRASSE")
    assert entity_id("ＯｐｅｎＡＩ", "Organization") == entity_id("openai", " organization")


def test_procedure_only_expands(tmp_path):
    build = [s.name for s in HetaGraphProcedure(extractor="nlp").expand()]
    merge = [s.name for s in HetaGraphProcedure(mode="merge", rechunk=True, merge_chunks=True).expand()]
    assert build == ["extract_entities", "extract_relations", "deduplicate_entities", "deduplicate_relations", "build_graph"]
    assert merge == ["rechunk_documents", "merge_chunks", "extract_entities", "extract_relations",
                     "deduplicate_entities", "deduplicate_relations", "merge_graph_into_store"]
    assert not hasattr(HetaGraphProcedure(), "run")
    # nlp needs no language model anywhere in the expanded steps
    needs = {ref.key for step in HetaGraphProcedure(extractor="nlp").expand() for ref in step.requirements.components}
    assert not any(key.startswith("models.language") for key in needs)
    strong = HetaGraphProcedure(model="strong").expand()
    assert {ref.key for ref in ExtractRelations(model="strong").requirements.components} >= {"models.language.strong"}
    assert all("models.language.strong" in {r.key for r in s.requirements.components} for s in strong if s.name.startswith("extract"))
    with pytest.raises(ValueError):
        HetaGraphProcedure(mode="rebuild")


def test_toml_recipe_looks_up_the_procedure(registry):
    recipe = Recipe.from_toml(
        '[models.embedding]\nmodel_name = "local/all-MiniLM-L6-v2"\n'
        '[[steps]]\nstep = "parse_documents"\n[[steps]]\nstep = "split_documents"\n'
        '[[steps]]\nstep = "heta_graph"\nextractor = "nlp"\nmode = "merge"\n'
        '[[steps]]\nstep = "extract_relations"\nmodel = "strong"\n',
        registry,
    )
    assert recipe.steps[2] == HetaGraphProcedure(extractor="nlp", mode="merge")
    assert recipe.steps[3] == ExtractRelations(model="strong")
    assert "heta_graph" in recipe.to_toml()


async def test_nlp_graph_end_to_end(tmp_path, registry, embedding_only, base_steps):
    kb, report = await build_kb(
        tmp_path, registry, graph_recipe(embedding_only, base_steps),
        [SourceDocument(text=OCEAN, id="ocean", name="ocean.txt"), SourceDocument(text=RIVERS, id="rivers", name="rivers.txt")],
    )
    assert "heta_graph_search" in kb.available_queries
    assert report.issues == []
    stats = {s.name: s.stats for s in report.steps}
    assert stats["build_graph"]["entities_written"] > 0 and "embedding_ms" in stats["build_graph"]
    assert "llm_calls" not in stats["extract_entities"]
    kinds = {(a.kind, a.name, a.store) for a in kb.search_assets}
    assert {("graph_tables", "default", "stores.graph"), ("graph_vector_index", "default", "stores.vector")} <= kinds

    response = await kb.query("Which ocean is the largest?", mode="heta_graph_search", top_k=8)
    assert response.results
    assert {r.kind for r in response.results} <= {"entity", "relation"}
    chunk_ids = {r.id for r in (await kb.query("ocean", mode="vector_search", top_k=50)).results}
    for result in response.results:
        assert result.id.startswith(f"{result.kind}:")
        assert result.sources == ("heta_graph_search",)
        assert result.evidence, result
        for evidence in result.evidence:
            assert evidence.kind == "chunk" and evidence.id in chunk_ids
            assert evidence.metadata["document_id"] in ("ocean", "rivers")
            assert evidence.text and evidence.sources == ("heta_graph_search",)
    names = [r.metadata.get("name", "") for r in response.results]
    assert "Pacific Ocean" in names
    pacific = next(r for r in response.results if r.metadata.get("name") == "Pacific Ocean")
    assert {e.metadata["document_id"] for e in pacific.evidence} == {"ocean", "rivers"}

    # one hop: neighbours come through stored relations and say so
    expanded = await kb.query("Pacific Ocean", mode="heta_graph_search", top_k=20, options={"max_neighbors": 3, "entity_top_k": 1, "relation_top_k": 1})
    hops = [r for r in expanded.results if r.metadata.get("hop") == 1]
    assert 1 <= len(hops) <= 3
    assert all(r.metadata["via_entity"] == pacific.id for r in hops)
    none = await kb.query("Pacific Ocean", mode="heta_graph_search", top_k=20, options={"max_neighbors": 0, "entity_top_k": 1, "relation_top_k": 1})
    assert not [r for r in none.results if r.metadata.get("hop") == 1]

    # a fusion engine credits a chunk for being evidence of a graph hit
    hybrid = await kb.query("Pacific Ocean", mode="hybrid_search", top_k=5)
    assert hybrid.results and any(r.kind == "chunk" for r in hybrid.results)

    filtered = await kb.query("Pacific Ocean", mode="heta_graph_search", top_k=10, filters={"document_id": "rivers"})
    assert filtered.results
    assert all(e.metadata["document_id"] == "rivers" for r in filtered.results for e in r.evidence)
    kb.close()


async def test_chinese_text(tmp_path, registry, embedding_only, base_steps):
    kb, report = await build_kb(
        tmp_path, registry, graph_recipe(embedding_only, base_steps),
        [SourceDocument(text=SHANGHAI, id="shanghai", name="shanghai.txt")],
    )
    graph = kb.get_component("stores.graph")
    stored = graph.entities_by_name(["上海市", "长江", "上海港"])
    assert set(stored) == {"上海市", "长江", "上海港"}
    response = await kb.query("上海市", mode="heta_graph_search", top_k=5)
    top = response.results[0]
    assert "上海" in top.text
    assert top.evidence[0].metadata["document_id"] == "shanghai" and "上海" in top.evidence[0].text
    kb.close()


async def test_deleting_a_document_removes_its_orphaned_facts(tmp_path, registry, embedding_only, base_steps):
    kb, _ = await build_kb(
        tmp_path, registry, graph_recipe(embedding_only, base_steps),
        [SourceDocument(text=OCEAN, id="ocean", name="ocean.txt"), SourceDocument(text=RIVERS, id="rivers", name="rivers.txt")],
    )
    graph = kb.get_component("stores.graph")
    vectors = kb.get_component("stores.vector")
    only_ocean, _ = graph.facts_of_documents(["ocean"])
    shared = graph.entities_by_name(["Pacific Ocean"])["pacific ocean"][0].id
    krill = graph.entities_by_name(["krill"])["krill"][0].id
    amazon = graph.entities_by_name(["Amazon River"])["amazon river"][0].id
    ocean_relations = graph.facts_of_documents(["ocean"])[1] - graph.facts_of_documents(["rivers"])[1]
    assert krill in only_ocean and ocean_relations

    # the dry run's preview counts exactly what the removal then takes, and changes nothing itself
    before = graph.counts()
    preview = await kb.removal_preview(["ocean"])
    assert graph.counts() == before
    ocean_chunks = [c["id"] for c in kb.objects.get_json(chunks_key("ocean"))]
    assert preview["split_documents"] == {"chunks": len(ocean_chunks)}
    assert preview["index_vectors"] == {"vectors": len(ocean_chunks)}
    graph_preview = preview["build_graph"]
    assert graph_preview["entities_reduced"] >= 1  # Pacific Ocean keeps the rivers article's evidence

    await kb.delete_documents(["ocean"])

    after = graph.counts()
    assert graph_preview["entities_removed"] == before["entities"] - after["entities"]
    assert graph_preview["relations_removed"] == before["relations"] - after["relations"]

    assert graph.get_entities([krill]) == {}
    assert graph.get_entities([shared]) and graph.get_entities([amazon])
    assert {row[1] for row in graph.evidence("entity", [shared])[shared]} == {"rivers"}
    assert graph.get_relations(list(ocean_relations)) == {}
    assert graph.documents() == {"rivers"}
    entities = vectors.collection("graph_entities")
    assert entities.contains([krill, shared]) == [False, True]
    assert not any(vectors.collection("graph_relations").contains(list(ocean_relations)))
    response = await kb.query("krill", mode="heta_graph_search", top_k=10)
    assert all(e.metadata["document_id"] == "rivers" for r in response.results for e in r.evidence)
    kb.close()


async def test_rebuild_replaces_and_reuses_vectors(tmp_path, registry, embedding_only, base_steps):
    kb, first = await build_kb(tmp_path, registry, graph_recipe(embedding_only, base_steps), [SourceDocument(text=OCEAN, id="ocean", name="ocean.txt")])
    counts = kb.get_component("stores.graph").counts()
    again = await kb.build(rebuild=True)
    stats = {s.name: s.stats for s in again.steps}["build_graph"]
    assert stats.get("entities_embedded", 0) == 0 and stats.get("relations_embedded", 0) == 0
    assert stats["entities_vectors_reused"] == counts["entities"]
    assert kb.get_component("stores.graph").counts() == counts
    kb.close()


@attrs.frozen
class LoseChunk:
    """Test step: deletes a chunk from the object store after extraction, as a crash or a bad edit might."""

    name: ClassVar[str] = "lose_chunk"
    chunk_id: str = ""

    @property
    def requirements(self):
        return StepRequirements(components=frozenset({store_ref("objects")}), artifacts=frozenset({"chunk_keys"}))

    @property
    def capabilities(self):
        return StepCapabilities()

    async def run(self, context):
        objects = context.get_component("stores.objects")
        for key in context.get_artifact("chunk_keys"):
            chunks = objects.get_json(key)
            objects.put_json(key, [c for c in chunks if c["id"] != self.chunk_id])

    def cleanup_plan(self, artifacts):
        return StepCleanupPlan()


async def test_missing_evidence_chunk_is_an_issue(tmp_path, embedding_only, base_steps, local_model):
    registry = make_registry(heta_plugin_vector, heta_plugin_local, heta_plugin_graph, inline_plugin(steps=[LoseChunk]))
    text = "Krill live in the Southern Ocean. " * 8 + "Penguins eat krill near Antarctica. " * 8
    recipe = Recipe(models=embedding_only, steps=[
        *base_steps, ExtractEntities(extractor="nlp"), ExtractRelations(extractor="nlp"), LoseChunk(chunk_id="doc-00000"), BuildGraph(),
    ])
    kb, report = await build_kb(tmp_path, registry, recipe, [SourceDocument(text=text, id="doc", name="doc.txt")])
    missing = [i for i in report.issues if i.code == "missing_evidence_chunk"]
    assert missing and all(i.step == "build_graph" for i in missing)
    assert {i.resolution.action for i in missing} <= {"dropped_fact", "dropped_evidence"}
    graph = kb.get_component("stores.graph")
    assert graph.get_chunks(["doc-00000"]) == {}
    assert graph.get_chunks(["doc-00001"])
    assert "heta_graph_search" in kb.available_queries
    kb.close()


async def test_merged_extraction_units_keep_member_chunks_as_evidence(tmp_path, registry, embedding_only):
    from heta_framework.builtin.steps import ParseDocuments, SplitDocuments

    from heta_plugin_vector import EmbedChunks, IndexVectors

    text = "Krill swarm in the Southern Ocean. " * 6 + "Emperor penguins breed in Antarctica. " * 6
    steps = [ParseDocuments(), SplitDocuments(chunk_size=30, chunk_overlap=5), EmbedChunks(), IndexVectors(),
             HetaGraphProcedure(extractor="nlp", merge_chunks=True)]
    kb, report = await build_kb(tmp_path, registry, Recipe(models=embedding_only, steps=steps), [SourceDocument(text=text, id="doc", name="doc.txt")])
    stats = {s.name: s.stats for s in report.steps}
    assert stats["merge_chunks"]["units_out"] < stats["merge_chunks"]["chunks_in"]
    graph = kb.get_component("stores.graph")
    chunk_ids = {f"doc-{i:05d}" for i in range(stats["split_documents"]["chunks"])}
    penguins = graph.entities_by_name(["Antarctica"])["antarctica"][0]
    krill = graph.entities_by_name(["Southern Ocean"])["southern ocean"][0]
    penguin_chunks = {row[0] for row in graph.evidence("entity", [penguins.id])[penguins.id]}
    krill_chunks = {row[0] for row in graph.evidence("entity", [krill.id])[krill.id]}
    # evidence names the split chunks that mention the entity, not the merged unit
    assert penguin_chunks <= chunk_ids and krill_chunks <= chunk_ids
    assert penguin_chunks != krill_chunks
    assert all("antarctica" in graph.get_chunks([c])[c].text.lower() for c in penguin_chunks)

    await kb.delete_documents(["doc"])
    objects = kb.get_component("stores.objects")
    staged = [d for key in objects.keys("graph/extract/") for d in objects.get_json(key)["documents"]]
    assert staged == [] and graph.counts() == {"entities": 0, "relations": 0, "evidence": 0, "chunks": 0}
    kb.close()


async def test_rechunked_documents_are_the_evidence(tmp_path, registry, embedding_only, base_steps):
    text = "The Mariana Trench is the deepest oceanic trench. " * 3 + "The Atlantic Ocean separates Europe and America. " * 3
    recipe = Recipe(models=embedding_only, steps=[*base_steps, HetaGraphProcedure(extractor="nlp", rechunk=True)])
    kb, report = await build_kb(tmp_path, registry, recipe, [SourceDocument(text=text, id="deep", name="deep.txt")])
    assert report.issues == []
    graph = kb.get_component("stores.graph")
    trench = graph.entities_by_name(["Mariana Trench"])["mariana trench"][0]
    chunk_ids = [row[0] for row in graph.evidence("entity", [trench.id])[trench.id]]
    assert chunk_ids and all(c.startswith("deep-g") for c in chunk_ids)
    stored = graph.get_chunks(chunk_ids)
    assert all("Mariana Trench" in c.text and c.metadata["document_id"] == "deep" for c in stored.values())
    response = await kb.query("deepest trench", mode="heta_graph_search", top_k=3)
    assert response.results[0].evidence[0].id.startswith("deep-g")
    kb.close()


async def test_names_only_embedding_matches_names_closely(tmp_path, registry, embedding_only, base_steps):
    documents = [SourceDocument(text=OCEAN, id="ocean", name="ocean.txt"), SourceDocument(text=RIVERS, id="rivers", name="rivers.txt")]
    full_kb, full = await build_kb(tmp_path / "full", registry, graph_recipe(embedding_only, base_steps), documents)
    names_kb, names_only = await build_kb(
        tmp_path / "names", registry, graph_recipe(embedding_only, base_steps, embed_descriptions=False), documents
    )
    full_stats = next(s.stats for s in full.steps if s.name == "build_graph")
    names_stats = next(s.stats for s in names_only.steps if s.name == "build_graph")
    assert names_stats["embedded_texts"] == full_stats["embedded_texts"]  # the same facts, as far shorter texts

    async def best_entity(kb):
        results = (await kb.query("Pacific Ocean", mode="heta_graph_search", top_k=5)).results
        return max((r for r in results if r.kind == "entity"), key=lambda r: r.score)

    full_hit, names_hit = await best_entity(full_kb), await best_entity(names_kb)
    assert names_hit.metadata["name"].lower() == full_hit.metadata["name"].lower() == "pacific ocean"
    # the option reaches BuildGraph: the entity was embedded from a different (name-only) text
    assert names_hit.score != pytest.approx(full_hit.score, abs=1e-4)


async def test_co_occurrences_embed_their_sentence_once(tmp_path, registry, embedding_only, base_steps):
    kb, report = await build_kb(
        tmp_path, registry, graph_recipe(embedding_only, base_steps, embed_descriptions=False),
        [SourceDocument(text=OCEAN, id="ocean", name="ocean.txt")],
    )
    stats = next(s.stats for s in report.steps if s.name == "build_graph")
    graph = kb.get_component("stores.graph")
    relations = graph.get_relations(list(graph.facts_of_documents(["ocean"])[1]))
    sentences = {r.description for r in relations.values()}
    assert len(relations) > len(sentences)  # one sentence holds several co-occurrences
    assert stats["embedded_texts"] == stats["entities_embedded"] + len(sentences)

    # the co-occurrences of a sentence share one vector, the sentence's, even with names-only embedding:
    # stored once, under the first of their ids, with all of their ids beside it
    from heta_plugin_graph.vectors import relations_of_hit

    whales = next(s for s in sentences if "whales" in s)
    sharing = sorted(i for i, r in relations.items() if r.description == whales)
    assert len(sharing) > 1
    collection = kb.get_component("stores.vector").collection("graph_relations")
    assert len(collection) == len(sentences) == stats["relations_embedded"]
    assert stats["relations_sharing_a_vector"] == len(relations) - len(sentences)
    query = await kb.get_component("models.embedding").embed([whales])
    hits = collection.search(query, len(relations))[0]
    assert hits[0].id == sharing[0] and hits[0].score == pytest.approx(1.0, abs=1e-4)
    assert relations_of_hit(hits[0]) == sharing
    assert all(h.score < 0.99 for h in hits[1:]) and len(hits) == len(sentences)
    # every relation is its vector's or in one's shared_by, once
    covered = [i for h in hits for i in relations_of_hit(h)]
    assert sorted(covered) == sorted(relations)

    # the document changed: its facts are written again, one vector per sentence again, and only the new
    # sentence reaches the model (the others come from the graph cache)
    again = await kb.build([SourceDocument(text=OCEAN + " Krill swarm.", id="ocean", name="ocean.txt")])
    second = next(s.stats for s in again.steps if s.name == "build_graph")
    assert second["embedded_texts"] <= 1 and second["graph_cache_hits"] >= len(sentences)
    assert len(collection) == second["relations_embedded"] + second["relations_vectors_reused"] == len(sentences)
    kb.close()


async def test_search_returns_one_relation_per_sentence_and_fills_the_list(tmp_path, registry, embedding_only, base_steps):
    # one sentence naming four places holds six co-occurrences with one vector: they must not fill the relation hits
    crowded = "Paris, Berlin, Madrid and Rome are capitals in Europe."
    kb, _ = await build_kb(
        tmp_path, registry, graph_recipe(embedding_only, base_steps, embed_descriptions=False),
        [SourceDocument(text=crowded + " " + OCEAN, id="mixed", name="mixed.txt"),
         SourceDocument(text=RIVERS, id="rivers", name="rivers.txt")],
    )
    graph = kb.get_component("stores.graph")
    relations = graph.get_relations(list(graph.facts_of_documents(["mixed", "rivers"])[1]))
    assert sum(r.description == crowded for r in relations.values()) >= 3
    distinct_sentences = len({r.description for r in relations.values()})
    response = await kb.query("European capital cities", mode="heta_graph_search", top_k=4,
                              options={"include": "relations", "max_neighbors": 0, "min_score": -1.0})
    descriptions = [r.metadata["description"] for r in response.results]
    assert descriptions[0] == crowded  # the best sentence is still first
    # the other sentences fill the list (min_score -1: unrelated sentences score below 0)
    assert len(descriptions) == len(set(descriptions)) == min(4, distinct_sentences)
    kb.close()


async def test_lost_graph_vectors_come_back_from_the_cache_without_embedding(tmp_path, registry, embedding_only, base_steps, monkeypatch):
    """A kill inside build_graph can leave the graph written and its vectors not: the resume embeds 0 graph texts."""
    from heta_plugin_graph.vectors import ENTITY_COLLECTION, RELATION_COLLECTION

    kb, _ = await build_kb(tmp_path, registry, graph_recipe(embedding_only, base_steps), [SourceDocument(text=OCEAN, id="ocean", name="ocean.txt")])
    counts = kb.get_component("stores.graph").counts()
    vectors = kb.get_component("stores.vector")
    vectors.drop_collection(ENTITY_COLLECTION)
    vectors.drop_collection(RELATION_COLLECTION)
    client = kb.get_component("models.embedding")
    embedded: list[str] = []
    real_embed = client.embed

    async def counting_embed(texts):
        embedded.extend(texts)
        return await real_embed(texts)

    monkeypatch.setattr(client, "embed", counting_embed)
    again = await kb.build(rebuild=True)
    stats = {s.name: s.stats for s in again.steps}["build_graph"]
    assert embedded == []  # neither chunk nor graph texts reach the model
    assert stats["graph_cache_hits"] >= counts["entities"] and stats.get("embedded_texts", 0) == 0
    restored = kb.get_component("stores.vector").collection(ENTITY_COLLECTION)
    assert len(restored) == counts["entities"]  # every entity has its vector again
    kb.close()


async def test_vectors_written_in_small_blocks_are_each_facts_own(tmp_path, registry, embedding_only, base_steps, monkeypatch):
    """build_graph upserts in blocks (memory): every stored vector is still its own fact's, across block edges."""
    import numpy as np
    from heta_plugin_graph.vectors import ENTITY_COLLECTION, RELATION_COLLECTION, entity_text, relation_text

    from heta_plugin_graph import writer

    monkeypatch.setattr(writer, "UPSERT_BLOCK", 3)
    kb, report = await build_kb(
        tmp_path, registry, graph_recipe(embedding_only, base_steps, embed_descriptions=False),
        [SourceDocument(text=OCEAN, id="ocean", name="ocean.txt"), SourceDocument(text=RIVERS, id="rivers", name="rivers.txt")],
    )
    graph = kb.get_component("stores.graph")
    entity_ids, relation_ids = graph.facts_of_documents(["ocean", "rivers"])
    entities = graph.get_entities(list(entity_ids))
    relations = graph.get_relations(list(relation_ids))
    assert len(entities) > 6 and len(relations) > 6  # several blocks of 3 each
    model = kb.get_component("models.embedding")
    vectors = kb.get_component("stores.vector")
    relation_texts = {
        i: relation_text(entities[r.source_id].name, r.name or r.type, entities[r.target_id].name, r.description,
                         relation_type=r.type, with_description=False)
        for i, r in relations.items()
    }
    carriers = {min(i for i in relation_texts if relation_texts[i] == text) for text in relation_texts.values()}
    assert len(carriers) > 3  # one vector per distinct relation text: still more than one block of 3
    expected = [(ENTITY_COLLECTION, "entity_id", i, entity_text(e.name, e.type, "")) for i, e in entities.items()] + [
        (RELATION_COLLECTION, "relation_id", i, relation_texts[i]) for i in sorted(carriers)
    ]
    # each block is embedded on its own, yet no text is embedded twice (a later block finds it in the graph cache)
    stats = next(s.stats for s in report.steps if s.name == "build_graph")
    assert stats["embedded_texts"] == len({text for *_, text in expected})
    queries = np.asarray(await model.embed([text for *_, text in expected]))
    for (collection, key, fact_id, _), query in zip(expected, queries):
        hits = vectors.collection(collection).search(query[None, :], 1, filters={key: [fact_id]})[0]
        assert [h.id for h in hits] == [fact_id]
        assert hits[0].score == pytest.approx(1.0, abs=1e-4)
    kb.close()


async def test_entity_vectors_leave_memory_before_relations_are_embedded(tmp_path, registry, embedding_only, base_steps,
                                                                         monkeypatch):
    """Memory: the FAISS store writes and forgets the entity collection once its vectors are in, so the index
    is not held while relation sentences are embedded; a search after the build opens it again."""
    from heta_plugin_graph.vectors import ENTITY_COLLECTION, RELATION_COLLECTION
    from heta_plugin_vector.store import FaissVectorStore

    from heta_plugin_graph import writer

    seen: list[tuple[str, bool]] = []
    real_upsert = writer._upsert_changed

    async def upsert_changed(context, embedder, collection, *args, **kwargs):
        store = context.store("vector")
        seen.append((collection.name, ENTITY_COLLECTION in store._collections))
        return await real_upsert(context, embedder, collection, *args, **kwargs)

    released: list[str] = []
    real_release = FaissVectorStore.release_collection
    monkeypatch.setattr(writer, "_upsert_changed", upsert_changed)
    monkeypatch.setattr(FaissVectorStore, "release_collection", lambda self, name: (released.append(name), real_release(self, name))[1])
    kb, _ = await build_kb(tmp_path, registry, graph_recipe(embedding_only, base_steps),
                           [SourceDocument(text=OCEAN, id="ocean", name="ocean.txt")])
    assert seen == [(ENTITY_COLLECTION, True), (RELATION_COLLECTION, False)]
    assert released == [ENTITY_COLLECTION]
    response = await kb.query("largest ocean", mode="heta_graph_search", top_k=5)
    assert any(r.kind == "entity" for r in response.results)  # the released collection answers again
    kb.close()


async def test_facts_rank_by_similarity_weighed_by_their_best_evidence(tmp_path, registry, embedding_only, base_steps):
    kb, _ = await build_kb(
        tmp_path, registry, graph_recipe(embedding_only, base_steps, embed_descriptions=False),
        [SourceDocument(text=OCEAN, id="ocean", name="ocean.txt"), SourceDocument(text=RIVERS, id="rivers", name="rivers.txt")],
    )
    query = "Which whales feed on krill in the Pacific Ocean?"
    plain = await kb.query(query, mode="heta_graph_search", top_k=20, options={"evidence_weight": 0})
    weighed = await kb.query(query, mode="heta_graph_search", top_k=20)
    assert plain.results and weighed.results
    # evidence_weight 0: the vector similarity alone, best first
    assert [r.score for r in plain.results] == [r.metadata["similarity"] for r in plain.results]
    for result in weighed.results:
        best = result.metadata["evidence_relevance"]
        assert best == max(e.score for e in result.evidence)  # the best evidence chunk is the one shown first
        assert result.evidence[0].score == best
        assert result.score == pytest.approx(result.metadata["similarity"] * (0.5 + 0.5 * best))
    assert [r.score for r in weighed.results] == sorted((r.score for r in weighed.results), reverse=True)
    # the Pacific Ocean's evidence in the ocean document holds the query's words, the rivers one fewer of them:
    # a fact backed only by the rivers document loses more of its similarity than one backed by the ocean document
    pacific = next(r for r in weighed.results if r.kind == "entity" and r.metadata["name"] == "Pacific Ocean")
    assert pacific.evidence[0].metadata["document_id"] == "ocean"
    by_id = {r.id: r for r in plain.results}
    kept = {r.id: r.score / by_id[r.id].score for r in weighed.results if r.id in by_id}
    ocean_only = [ratio for i, ratio in kept.items() if {e.metadata["document_id"] for e in by_id[i].evidence} == {"ocean"}]
    rivers_only = [ratio for i, ratio in kept.items() if {e.metadata["document_id"] for e in by_id[i].evidence} == {"rivers"}]
    assert ocean_only and rivers_only and min(ocean_only) > max(rivers_only)
    # min_score applies to the vector hits' similarity, and a bad weight is refused
    floor = 0.55  # "Pacific Ocean" and "krill" are about 0.57 similar to the query, and their evidence takes a little off
    high = await kb.query(query, mode="heta_graph_search", top_k=20, options={"min_score": floor, "max_neighbors": 0})
    assert high.results and all(r.metadata["similarity"] >= floor for r in high.results)
    assert any(r.score < floor for r in high.results)  # a hit above min_score stays though its evidence lowers its score
    from heta_framework.errors import InvalidQueryError

    with pytest.raises(InvalidQueryError, match="evidence_weight"):
        await kb.query(query, mode="heta_graph_search", options={"evidence_weight": 1.5})
    kb.close()


def test_evidence_relevance_is_the_share_of_query_terms_whatever_the_tokenising_shortcut():
    from heta_plugin_graph.engine import lexical_relevance, relevance_terms

    texts = ["The Pacific Ocean is the largest ocean on Earth; a whale is a mammal.", "A b c d", SHANGHAI,
             "上海 Shanghai port, Ｐａｃｉｆｉｃ ocean", "ocean_floor ocean-floor O'Brien", ""]
    queries = ["a largest ocean", "Pacific whale mammal x", "上海港 port", "ocean floor brien", "b c"]
    for text in texts:
        for query in queries:
            terms = relevance_terms(query)
            expected = len(terms & relevance_terms(text)) / len(terms) if terms else 0.0
            assert lexical_relevance(terms, text) == expected, (query, text)


def test_an_entity_vector_leaves_out_a_type_that_says_only_that_it_is_a_name():
    from heta_plugin_graph.vectors import entity_text

    assert entity_text("Pacific Ocean", "named_entity", "") == "Pacific Ocean"
    assert entity_text("krill", "Concept", "Blue whales feed on krill.") == "krill: Blue whales feed on krill."
    assert entity_text("Shanghai", "location", "") == "Shanghai (location)"  # a type that says something stays
    assert entity_text("ＯｐｅｎＡＩ", "organization", "") == "OpenAI (organization)"
