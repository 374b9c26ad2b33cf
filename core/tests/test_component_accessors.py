"""Typed component accessors (``context.store("objects")``, ``context.language_model("strong")``) name the
same components as the spec's keys, for steps and for query engines, defaults and named ones alike."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import pytest
from heta_framework.common.models import Completion, LanguageModel, ModelProvider
from heta_framework.errors import KnowledgeBaseError
from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
from heta_framework.kb.search import QueryContext, QueryRequest, QueryResponse
from heta_framework.kb.steps import StepCapabilities, StepContextProtocol, StepRequirements, model_ref, store_ref
from heta_framework.testing import inline_plugin, make_registry


@attrs.frozen
class NamedLanguageClient:
    """A language client that only says which model it is (the accessors are under test, not the model)."""

    model_name: str

    async def complete(self, messages: Any, **options: Any) -> Completion:
        return Completion(text=self.model_name)


LANGUAGE_PROVIDER = ModelProvider("probe", frozenset({"language"}), lambda config: NamedLanguageClient(config.model_name))
SEEN: dict[str, Any] = {}


class ProbeStep:
    """Records what each accessor returned beside what the spec's key returns."""

    name: ClassVar[str] = "probe_components"

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=frozenset({store_ref("objects"), store_ref("sql"), model_ref("language", "strong")}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities()

    async def run(self, context: StepContextProtocol) -> None:
        SEEN["pairs"] = [
            (context.store("objects"), context.get_component("stores.objects")),
            (context.store("sql"), context.get_component("stores.sql")),
            (context.language_model(), context.get_component("models.language")),
            (context.language_model("strong"), context.get_component("models.language.strong")),
            (context.component(model_ref("language", "strong")), context.get_component("models.language.strong")),
            (context.parsers(), context.get_component("parsers.documents")),
        ]
        SEEN["strong"] = (await context.language_model("strong").complete([])).text
        SEEN["root"] = context.root
        SEEN["document_ids"] = list(context.document_ids)

    def cleanup_plan(self, artifacts: Any) -> Any:
        from heta_framework.kb.steps import StepCleanupPlan

        return StepCleanupPlan()


class ProbeEngine:
    mode = "probe_components"
    required_assets: frozenset = frozenset()

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        SEEN["query_pairs"] = [
            (context.store("sql"), context.get_component("stores.sql")),
            (context.language_model("strong"), context.get_component("models.language.strong")),
        ]
        with pytest.raises(KnowledgeBaseError, match="models.reranker"):
            context.reranker()
        return QueryResponse(results=(), metadata={"mode": self.mode})


@pytest.fixture
def kb(tmp_path):
    registry = make_registry(inline_plugin(steps=[ProbeStep], query_engines=[ProbeEngine()], model_providers=[LANGUAGE_PROVIDER]))
    models = KnowledgeModels(
        language=LanguageModel(model_name="probe/default"),
        named={"language": {"strong": LanguageModel(model_name="probe/strong")}},
    )
    with KnowledgeBase.create(tmp_path / "kb", Recipe(models=models, steps=[ProbeStep()]), registry=registry) as kb:
        yield kb


def test_step_accessors_return_the_components_the_spec_keys_name(kb):
    SEEN.clear()
    kb.sync.build([SourceDocument(id="a", name="a.txt", text="some text")])
    assert SEEN["pairs"] and all(typed is keyed for typed, keyed in SEEN["pairs"])
    assert SEEN["strong"] == "probe/strong"  # the named model, not the default one
    assert SEEN["pairs"][2][0].model_name == "probe/default"
    assert SEEN["root"] == kb.path and SEEN["document_ids"] == ["a"]


def test_query_context_has_the_same_accessors(kb):
    SEEN.clear()
    response = kb.sync.query("anything", mode="probe_components")
    assert response.metadata["mode"] == "probe_components"
    assert all(typed is keyed for typed, keyed in SEEN["query_pairs"])
    assert SEEN["query_pairs"][1][0].model_name == "probe/strong"


def test_a_third_party_step_using_only_the_spec_keys_keeps_working(kb):
    # StepContext still answers the spec's three methods; the accessors are additions
    from heta_framework.kb.context import StepContext

    context = StepContext(knowledge_base=kb, step_name="old_style", artifacts={"x": 1}, run_id=1, document_ids=[])
    assert isinstance(context, StepContextProtocol)
    assert context.get_artifact("x") == 1
    assert context.get_component("stores.objects") is context.store("objects")
