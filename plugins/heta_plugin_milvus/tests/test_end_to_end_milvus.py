"""The demo documents with ``[stores.vector] type = "milvus"`` (Milvus Lite) answer like FAISS.

Two knowledge bases from examples/documents with the starter recipe (`heta init`'s):
the default one (FAISS) and one whose only change is the vector slot on Milvus Lite.
The Milvus one is built the way docs/plugins/milvus.md says to migrate: with the
FAISS knowledge base's caches copied in first, so the rebuild embeds nothing.
``vector_search`` and ``heta_graph_search`` (whose entity and relation vectors are
Milvus collections too) must give the same top-1 for every question and overlap@5
(the share of the FAISS top 5 the Milvus top 5 also holds) is printed and must be high.
"""

from __future__ import annotations

import asyncio
import math
import shutil
from pathlib import Path

import pytest
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.kb.starter import starter_recipe_toml
from heta_framework.plugins.registry import PluginRegistry

DOCUMENTS = Path(__file__).resolve().parents[3] / "examples" / "documents"
QUESTIONS = {
    "vector_search": ["which animals breathe air but live in the sea?", "the largest planet in the solar system",
                      "machines that learn from data", "the molecule that carries genetic information",
                      "ocean life", "how do vaccines work?"],
    "heta_graph_search": ["Alan Turing", "Alexander Fleming", "Neil Armstrong", "Charles Darwin", "Marie Curie"],
    "hybrid_search": ["who discovered penicillin?", "first humans to walk on the Moon", "how do genes pass traits on?"],
}

pytestmark = pytest.mark.slow
REGISTRY = PluginRegistry.from_entry_points(strict=True)
MILVUS_SECTION = '\n[stores.vector]\ntype = "milvus"\nuri = "milvus/vectors.db"\nindex = "FLAT"\n'


def build(root: Path, recipe_text: str):
    kb = KnowledgeBase.create(root, Recipe.from_toml(recipe_text, REGISTRY), registry=REGISTRY)
    return kb, asyncio.run(kb.build([DOCUMENTS]))


def copy_caches(source: Path, target: Path) -> list[str]:
    """Every cache of the old knowledge base (chunk and graph embeddings, LLM answers) into the new folder."""
    copied = []
    for cache in sorted(source.glob("*/cache.sqlite")):
        (target / cache.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy2(cache, target / cache.parent.name / cache.name)
        copied.append(cache.parent.name)
    return copied


def result_key(result) -> str:
    """A chunk or entity by its id; a relation by the sentence it was embedded from.

    heta_graph_search keeps one relation per embedded text (the co-occurrences of one
    sentence share its vector and score exactly the same), and which of them a store
    lists first among equal scores is its own choice: FAISS by insertion order, Milvus
    by segment order. Any of them is the same answer.
    """
    if result.id.startswith("relation:") and result.metadata.get("description"):
        return "relation-text:" + result.metadata["description"]
    return result.id


def rankings(kb: KnowledgeBase, top_k: int) -> dict[str, dict[str, list[tuple[str, float]]]]:
    async def ask() -> dict[str, dict[str, list[tuple[str, float]]]]:
        return {mode: {q: [(result_key(r), r.score) for r in (await kb.query(q, mode=mode, top_k=top_k)).results]
                       for q in qs}
                for mode, qs in QUESTIONS.items()}

    return asyncio.run(ask())


def tied_with(ranking: list[tuple[str, float]], score: float) -> set[str]:
    # co-occurrence relations of one sentence share its vector: equal scores, broken each store's own way
    return {i for i, s in ranking if math.isclose(s, score, rel_tol=1e-5, abs_tol=1e-6)}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    folder = tmp_path_factory.mktemp("e2e_milvus")
    recipe = starter_recipe_toml(REGISTRY)
    faiss, faiss_report = build(folder / "faiss", recipe)
    faiss.close()
    (folder / "milvus").mkdir()
    copied = copy_caches(folder / "faiss", folder / "milvus")
    faiss = KnowledgeBase.load(folder / "faiss", registry=REGISTRY)
    milvus, milvus_report = build(folder / "milvus", recipe + MILVUS_SECTION)
    yield {"faiss": faiss, "milvus": milvus, "reports": (faiss_report, milvus_report), "copied": copied,
           "faiss_rankings": (rankings(faiss, 5), rankings(faiss, 20)), "milvus_rankings": rankings(milvus, 5)}
    faiss.close()
    milvus.close()


def test_vectors_are_in_milvus_not_faiss(both):
    milvus = both["milvus"]
    assert type(milvus.get_component("stores.vector")).__module__ == "heta_plugin_milvus.vector_store"
    assert set(QUESTIONS) <= set(milvus.available_queries)
    assert (milvus.path / "milvus" / "vectors.db").exists() and not (milvus.path / "vectors").exists()
    store = milvus.get_component("stores.vector")
    for name in ("chunks", "graph_entities", "graph_relations"):
        assert store.has_collection(name) and len(store.collection(name)) > 0, name
    faiss_store = both["faiss"].get_component("stores.vector")
    assert len(store.collection("chunks")) == len(faiss_store.collection("chunks"))
    assert len(store.collection("graph_entities")) == len(faiss_store.collection("graph_entities"))


def embedded_texts(report) -> dict[str, int]:
    return {step.key: int(step.stats.get("embedded_texts", 0)) for step in report.steps if "embedded_texts" in step.stats}


def test_rebuild_with_copied_caches_embeds_nothing(both):
    faiss_report, milvus_report = both["reports"]
    assert "embeddings" in both["copied"]
    assert faiss_report.document_count == milvus_report.document_count > 0
    first = embedded_texts(faiss_report)
    assert sum(first.values()) > 0, first
    assert sum(embedded_texts(milvus_report).values()) == 0, embedded_texts(milvus_report)


@pytest.mark.parametrize("mode", sorted(QUESTIONS))
def test_same_top_1_and_high_overlap_at_5(both, mode):
    faiss, faiss_wide = both["faiss_rankings"]
    milvus = both["milvus_rankings"]
    overlaps = []
    for question in QUESTIONS[mode]:
        want, got = [i for i, _ in faiss[mode][question]], [i for i, _ in milvus[mode][question]]
        assert want and got, f"{mode} {question!r}: FAISS found {want}, Milvus found {got}"
        tied = tied_with(faiss_wide[mode][question], faiss_wide[mode][question][0][1])
        assert got[0] in tied, f"{mode} {question!r}: Milvus top-1 {got[0]} is not the FAISS top-1 {sorted(tied)}"
        # a result tied with the FAISS 5th is as good as the one FAISS happened to keep
        equivalent = set(want) | tied_with(faiss_wide[mode][question], faiss[mode][question][-1][1])
        overlaps.append(len(equivalent & set(got)) / len(want))
        assert [round(s, 4) for _, s in milvus[mode][question]] == pytest.approx(
            [round(s, 4) for _, s in faiss[mode][question]], abs=2e-4)
    mean = sum(overlaps) / len(overlaps)
    print(f"\n{mode}: overlap@5 {mean:.2f} ({', '.join(f'{o:.1f}' for o in overlaps)}) over {len(overlaps)} questions")
    assert mean >= 0.9
