"""jieba ([chinese]) is an extra and tantivy a dependency an environment can still lack: a recipe that needs a missing one is refused with the pip command."""

from __future__ import annotations

import sys

import pytest
from heta_framework.errors import RecipeError
from heta_framework.kb import KnowledgeBase, Recipe

RECIPE = """
[stores.text]
type = "{backend}"
analyzer = "{analyzer}"

[[steps]]
step = "parse_documents"

[[steps]]
step = "split_documents"

[[steps]]
step = "index_full_text"
"""


@pytest.fixture
def without(monkeypatch):
    """Make ``import NAME`` fail as it does when the extra is not installed (sys.modules[NAME] = None)."""

    def block(name: str) -> None:
        for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.delitem(sys.modules, module)
        monkeypatch.setitem(sys.modules, name, None)

    return block


def test_whoosh_in_english_needs_neither_extra(without, tmp_path, registry):
    without("jieba")
    without("tantivy")
    recipe = Recipe.from_toml(RECIPE.format(backend="whoosh", analyzer="english"), registry)
    assert KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry).validate() == []


@pytest.mark.parametrize(
    ("blocked", "backend", "analyzer", "command"),
    [
        ("jieba", "whoosh", "chinese", "pip install 'heta-plugin-fulltext[chinese]'"),
        ("tantivy", "tantivy", "english", "pip install tantivy"),
    ],
)
def test_a_recipe_that_needs_a_missing_extra_names_it(without, tmp_path, registry, blocked, backend, analyzer, command):
    without(blocked)
    with pytest.raises(RecipeError) as caught:
        Recipe.from_toml(RECIPE.format(backend=backend, analyzer=analyzer), registry)
    assert command in str(caught.value) and "stores.text" in str(caught.value)
