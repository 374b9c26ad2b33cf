"""How a third-party plugin uses core's query-engine conformance suite: build a knowledge base, name a known query."""

from __future__ import annotations

import heta_plugin_example
import pytest
from heta_framework.kb import KnowledgeBase, Recipe, SourceDocument
from heta_framework.testing import make_registry
from heta_framework.testing.conformance import QueryEngineSuite
from heta_plugin_example import TitleSearchEngine

RECIPE = """
[[steps]]
step = "parse_documents"
[[steps]]
step = "split_documents"
chunk_size = 12
chunk_overlap = 2
[[steps]]
step = "index_titles"
"""

DOCUMENTS = [
    SourceDocument(id="whale", name="whale.md", text="# Whale\n\nWhales are marine mammals.\n\n## Feeding\n\nBaleen whales filter krill."),
    SourceDocument(id="reef", name="reef.md", text="# Great Barrier Reef\n\nThe largest coral reef system."),
    SourceDocument(id="shanghai", name="shanghai.md", text="# 上海\n\n上海市是中国的直辖市之一。"),
]


class TestTitleSearchConformance(QueryEngineSuite):
    mode = "title_search"
    known_query = ("whale feeding", "whale")

    @pytest.fixture
    def engine(self):
        return TitleSearchEngine()

    @pytest.fixture
    def registry(self):
        return make_registry(heta_plugin_example)

    @pytest.fixture
    def knowledge_base_path(self, tmp_path, registry):
        path = tmp_path / "kb"
        with KnowledgeBase.create(path, Recipe.from_toml(RECIPE, registry), registry=registry) as kb:
            kb.sync.build(DOCUMENTS)
        return path
