"""Every unmet requirement is reported at once, before any step runs."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import pytest
from heta_framework.builtin.steps import ParseDocuments, PersistChunks, SplitDocuments
from heta_framework.errors import RecipeValidationError
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepRequirements, model_ref, store_ref
from heta_framework.testing import inline_plugin, make_registry


@attrs.frozen
class NeedsEverything:
    name: ClassVar[str] = "needs_everything"

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(
            components=frozenset({model_ref("language", "strong"), store_ref("graph")}),
            artifacts=frozenset({"embeddings"}),
            queries=frozenset({"vector_search"}),
        )

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities()

    async def run(self, context: Any) -> None:
        raise AssertionError("must never run")

    def cleanup_plan(self, artifacts):
        return StepCleanupPlan()


def test_all_problems_in_one_message(tmp_path):
    registry = make_registry(inline_plugin(steps=[NeedsEverything]))
    recipe = Recipe(steps=[PersistChunks(), NeedsEverything(), ParseDocuments()])
    with pytest.raises(RecipeValidationError) as error:
        KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
    problems = error.value.problems
    assert len(problems) == 5, problems
    text = str(error.value)
    assert "step 0 (persist_chunks) needs artifact 'chunk_keys'" in text
    assert "add step split_documents before it" in text
    assert "models.language.strong" in text
    assert "stores.graph" in text
    assert "artifact 'embeddings'" in text
    assert "query mode 'vector_search'" in text and "heta-plugin-vector" in text
    assert not (tmp_path / "kb").exists(), "nothing is written for an invalid recipe"


def test_valid_order_passes(tmp_path, registry):
    KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[ParseDocuments(), SplitDocuments(), PersistChunks()]), registry=registry)
    assert (tmp_path / "kb" / "recipe.toml").exists()


def test_unknown_model_provider_is_a_validation_problem(tmp_path, registry):
    from heta_framework.common.models import EmbeddingModel
    from heta_framework.kb import KnowledgeModels

    recipe = Recipe(models=KnowledgeModels(embedding=EmbeddingModel(model_name="local/all-MiniLM-L6-v2")), steps=[ParseDocuments()])
    with pytest.raises(RecipeValidationError, match="heta-plugin-local"):
        KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
