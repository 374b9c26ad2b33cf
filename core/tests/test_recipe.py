"""Recipes: the cattrs round trip, field-path errors, secrets that never reach disk."""

from __future__ import annotations

import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.common.models import EmbeddingModel, LanguageModel
from heta_framework.errors import RecipeError
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, StoreConfig

RECIPE_TOML = """
[models.language]
model_name = "openai/gpt-4o-mini"
api_key_env = "MY_KEY"
base_url = "http://127.0.0.1:9/v1"

[models.named.language.strong]
model_name = "openai/gpt-4o"

[stores.sql]
type = "sqlite"
path = "db/chunks.sqlite"

[[steps]]
step = "parse_documents"
max_document_mb = 5.0

[[steps]]
step = "split_documents"
chunk_size = 64
chunk_overlap = 8

[[steps]]
step = "persist_chunks"
"""


def test_toml_round_trip(registry):
    recipe = Recipe.from_toml(RECIPE_TOML, registry)
    assert recipe.models.language.model_name == "openai/gpt-4o-mini"
    assert recipe.models.language.api_key_env == "MY_KEY"
    assert recipe.models.components()["models.language.strong"].model == "gpt-4o"
    assert recipe.stores["sql"] == StoreConfig(type="sqlite", options={"path": "db/chunks.sqlite"})
    assert recipe.steps == (ParseDocuments(max_document_mb=5.0), SplitDocuments(chunk_size=64, chunk_overlap=8), PersistChunks())
    again = Recipe.from_toml(recipe.to_toml(), registry)
    assert again == recipe


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('[[steps]]\nstep = "split_documents"\nchunksize = 10\n', "$.steps[0]"),
        ('[models.embedding]\nmodel_name = "local/x"\nmodle = 1\n', "$.models.embedding"),
        ('[models.embedding]\nmodel_name = "no-provider"\n', "provider/model"),
        ('[stores.sql]\ntype = "sqlite"\npaht = "x"\n', "$.stores.sql"),
        ('[stores.vector]\ntype = "milvus"\n', "Unknown store type 'vector:milvus'"),
        ('[[steps]]\nstep = "embed_chunk"\n', "Unknown step 'embed_chunk'"),
        ('steps = []\n[extra]\nx = 1\n', "unknown top-level key(s) extra"),
        ('[[steps]]\nstep = "split_documents"\nchunk_size = 10\nchunk_overlap = 10\n', "chunk_overlap"),
    ],
)
def test_invalid_recipes_name_the_field(registry, toml, expected):
    with pytest.raises(RecipeError) as error:
        Recipe.from_toml(toml, registry)
    assert expected in str(error.value)


def test_unknown_step_says_which_plugin_provides_it(registry):
    with pytest.raises(RecipeError) as error:
        Recipe.from_toml('[[steps]]\nstep = "embed_chunks"\n', registry)
    assert "heta-plugin-vector" in str(error.value)


def test_secret_values_never_reach_disk_or_summaries(tmp_path, registry):
    from heta_framework.common.models import ModelProvider
    from heta_framework.testing import inline_plugin, make_registry

    secret = "sk-very-secret-value-123"
    provider = ModelProvider(name="openai", kinds=frozenset({"language", "embedding"}), create=lambda config: object())
    registry = make_registry(inline_plugin(model_providers=[provider]))
    recipe = Recipe(
        models=KnowledgeModels(language=LanguageModel(model_name="openai/gpt-4o-mini", api_key=secret)),
        steps=[ParseDocuments(), SplitDocuments(), PersistChunks()],
    )
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    assert secret not in repr(recipe)
    assert secret not in str(recipe.summary())
    assert secret not in str(kb.manifest)
    assert recipe.summary()["models"]["language"]["api_key"] == "***"
    for path in (tmp_path / "kb").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
    # the key still reaches providers in memory
    assert kb.recipe.models.language.secret().reveal() == secret


def test_model_names_must_have_a_provider():
    with pytest.raises(ValueError, match="provider/model"):
        EmbeddingModel(model_name="all-MiniLM-L6-v2")
