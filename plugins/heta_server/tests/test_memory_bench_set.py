"""memory_search on the bundled English articles (examples/documents, 52 files, every leg built):
with every weight but relevance at 0, its order is exactly the RRF order of its three legs."""

from __future__ import annotations

from pathlib import Path

import pytest
from heta_framework.builtin.engines.fusion import RankedList, reciprocal_rank_fusion
from heta_framework.kb import KnowledgeBase
from heta_framework.plugins.registry import PluginRegistry
from heta_server.memory_engine import LEGS

ARTICLES = Path(__file__).resolve().parents[3] / "examples" / "documents"
QUESTIONS = ["Who discovered penicillin?", "animals that breathe air but live in the sea", "Alan Turing and codebreaking",
             "first humans on the Moon", "how do volcanoes erupt", "the theory of evolution", "what is photosynthesis",
             "black holes and gravity"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def articles_kb(tmp_path_factory, request):
    every_leg_recipe = request.getfixturevalue("every_leg_recipe_factory")
    kb = KnowledgeBase.create(tmp_path_factory.mktemp("articles") / "kb", every_leg_recipe(),
                              registry=PluginRegistry.from_entry_points(strict=True))
    kb.sync.build([ARTICLES])
    yield kb
    kb.close()


def test_relevance_only_memory_search_is_the_rrf_order_on_every_question(articles_kb):
    kb = articles_kb
    assert len(kb.documents) == 52 and set(LEGS) <= set(kb.available_queries)
    for question in QUESTIONS:
        response = kb.sync.query(question, mode="memory_search", top_k=10, options={
            "weight_recency": 0, "weight_importance": 0, "weight_relevance": 1, "update_access": False, "related": False})
        lists = [RankedList(leg, kb.sync.query(question, mode=leg, top_k=30).results) for leg in LEGS]
        expected = [r.id for r in reciprocal_rank_fusion(lists) if r.kind == "chunk"][:10]
        assert [r.id for r in response.results] == expected, question
        assert len(expected) == 10
