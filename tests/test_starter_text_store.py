"""The starter recipe's full text: tantivy when its library is installed, else Whoosh, the same ranking either way."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from heta_framework.cli.main import cli
from heta_framework.kb import KnowledgeBase
from heta_framework.runtime import starter

DOCUMENTS = Path(__file__).resolve().parent.parent / "examples" / "documents"
QUESTIONS = ["Who discovered penicillin?", "black hole event horizon", "coral reef bleaching", "the first landing on the moon",
             "who invented the World Wide Web", "tides and the pull of the moon"]


def init_and_build(kb: Path, documents: Path) -> KnowledgeBase:
    for args in (["init"], ["build", str(documents)]):
        result = CliRunner().invoke(cli, ["--kb", str(kb), *args])
        assert result.exit_code == 0, result.output
    return KnowledgeBase.load(kb)


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("documents")
    for path in sorted(DOCUMENTS.rglob("*.md")):
        (folder / path.name).write_bytes(path.read_bytes())
    return folder


def keyword_only(monkeypatch) -> None:
    """No embedding provider: the starter recipe is the keyword steps alone, which keeps this test to seconds."""
    real = starter.starter_recipe_toml

    def without_models(registry, **kwargs):
        class Keywords:
            items = {**registry.items, "model_providers": {}}

        return real(Keywords(), **kwargs)

    monkeypatch.setattr(starter, "starter_recipe_toml", without_models)


def test_heta_init_puts_full_text_in_tantivy_with_whoosh_as_the_fallback(tmp_path, documents, monkeypatch):
    keyword_only(monkeypatch)
    fast = init_and_build(tmp_path / "fast", documents)
    monkeypatch.setattr(starter, "find_spec", lambda name: None)  # as if tantivy were not installed
    fallback = init_and_build(tmp_path / "fallback", documents)
    try:
        assert fast.recipe.stores["text"].type == "tantivy"
        assert "text" not in fallback.recipe.stores  # the slot's default, Whoosh
        assert type(fallback.get_component("stores.text")).__name__ == "WhooshTextIndex"
        for question in QUESTIONS:
            tantivy_ids = [r.id for r in fast.sync.query(question, mode="full_text_search", top_k=3).results]
            whoosh_ids = [r.id for r in fallback.sync.query(question, mode="full_text_search", top_k=3).results]
            assert tantivy_ids and tantivy_ids[0] == whoosh_ids[0], question  # both BM25 over the same analysis
    finally:
        fast.close()
        fallback.close()
