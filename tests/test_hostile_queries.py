"""Hostile query input and bad options get the same InvalidQueryError in every mode of a real knowledge base.

Real FAISS, Whoosh, SQLite and graph files from three bundled articles, the
local MiniLM model, and the real openai client against the scripted server (so
heta_rewrite_search and heta_multihop_search are available). The checks run
before any engine: the model server must see no request at all.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_asyncio
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.errors import InvalidQueryError
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe
from heta_framework.plugins.registry import PluginRegistry

ARTICLES = Path(__file__).resolve().parent.parent / "examples" / "documents" / "life"

MODES = [
    "vector_search",
    "full_text_search",
    "sql_text_search",
    "heta_graph_search",
    "hybrid_search",
    "heta_rerank_search",
    "heta_rewrite_search",
    "heta_multihop_search",
]

#: one out-of-range or mistyped option per mode, with the words the message must contain
BAD_OPTIONS = {
    "vector_search": ({"min_score": "high"}, "options.min_score must be a number"),
    "full_text_search": ({"min_score": 0.5}, "takes no options of its own"),
    "sql_text_search": ({"candidate_top_k": 3}, "takes no options of its own"),
    "heta_graph_search": ({"max_neighbors": 10**8}, "options.max_neighbors must be a whole number between 0 and 1000"),
    "hybrid_search": ({"rrf_k": -1}, "options.rrf_k must be a number of at least 0"),
    "heta_rerank_search": ({"candidate_top_k": 5000}, "options.candidate_top_k must be a whole number between 1 and 1000"),
    "heta_rewrite_search": ({"candidate_top_k": 12.5}, "options.candidate_top_k must be a whole number"),
    "heta_multihop_search": ({"max_rounds": True}, "options.max_rounds must be a whole number"),
}

# one knowledge base (and one event loop) for the whole module: building it is the slow part
pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]


@pytest.fixture(scope="module")
def server():
    from heta_framework.testing.http import ScriptedServer

    with ScriptedServer() as running:
        yield running


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kb(tmp_path_factory, server):
    from heta_plugin_fulltext import IndexFullText

    from heta_plugin_graph import HetaGraphProcedure
    from heta_plugin_vector import EmbedChunks, IndexVectors

    root = tmp_path_factory.mktemp("hostile")
    documents = root / "docs"
    documents.mkdir()
    for name in ("penicillin.md", "alexander-fleming.md", "antibiotic.md"):
        shutil.copy(ARTICLES / name, documents / name)
    models = KnowledgeModels(
        embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2"),
        language=LanguageModel(model_name="openai/scripted", base_url=server.base_url, api_key="sk-test-hostile-0001"),
    )
    recipe = Recipe(
        models=models,
        steps=[
            ParseDocuments(),
            SplitDocuments(),
            PersistChunks(),
            EmbedChunks(),
            IndexVectors(),
            IndexFullText(),
            HetaGraphProcedure(extractor="nlp"),
        ],
    )
    knowledge_base = KnowledgeBase.create(root / "kb", recipe, registry=PluginRegistry.from_entry_points(strict=True))
    await knowledge_base.build([documents])
    assert set(MODES) <= set(knowledge_base.available_queries)
    yield knowledge_base
    knowledge_base.close()


@pytest.mark.parametrize("mode", MODES)
async def test_hostile_input_is_the_same_error_in_every_mode(kb, server, mode):
    hostile = [
        ({"text": "water\ud800ocean"}, "lone surrogate (U+D800)"),
        ({"text": "penicillin", "filters": {"name\x00": "penicillin.md"}}, "NUL character"),
        ({"text": "penicillin", "filters": {"name": {"$ne": "x"}}}, "a filter value must be text, a number or a boolean"),
        ({"text": "penicillin", "top_k": 0}, "top_k must be a whole number from 1 to 1000"),
        ({"text": "penicillin", "top_k": 10**8}, "top_k must be a whole number from 1 to 1000"),
        ({"text": "penicillin", "top_k": 2**70}, "top_k must be a whole number from 1 to 1000"),
        ({"text": "penic\x00illin"}, "The query text contains a NUL character"),
        ({"text": "penicillin", "options": {"top_kk": 3}}, "Unknown option 'top_kk'"),
        ({"text": "penicillin", "options": BAD_OPTIONS[mode][0]}, BAD_OPTIONS[mode][1]),
    ]
    for kwargs, message in hostile:
        text = kwargs.pop("text")
        with pytest.raises(InvalidQueryError) as raised:
            await kb.query(text, mode=mode, **kwargs)
        assert message in str(raised.value), (mode, kwargs)
    assert server.requests == []  # refused before any engine (or model) ran


@pytest.mark.parametrize("mode", ["vector_search", "full_text_search", "sql_text_search", "heta_graph_search", "hybrid_search", "heta_rerank_search"])
async def test_the_same_queries_made_valid_still_answer(kb, mode):
    response = await kb.query("water ocean penicillin", mode=mode, filters={"name": ["penicillin.md", "antibiotic.md"]})
    assert response.results
    did_you_mean = "did you mean 'rrf_k'?" if mode in ("hybrid_search", "heta_rerank_search") else ""
    with pytest.raises(InvalidQueryError) as raised:
        await kb.query("penicillin", mode=mode, options={"rrk_k": 1})
    assert did_you_mean in str(raised.value)
