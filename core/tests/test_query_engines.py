"""Mode availability, custom engines through heta_framework.testing, recursion detection, traces."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import pytest
from heta_framework.errors import ModeUnavailableError, QueryRecursionError, UnknownNameError
from heta_framework.kb import KnowledgeBase, Recipe
from heta_framework.kb.search import (
    QueryEngineRegistry,
    QueryRequest,
    QueryResponse,
    QueryResult,
    SearchAsset,
    SearchAssetRef,
)
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepRequirements, model_ref
from heta_framework.testing import inline_plugin, make_registry


@attrs.frozen
class Engine:
    """A configurable engine: returns the mode's name as a result, or calls ``calls`` through the context."""

    mode: str
    required_assets: frozenset = frozenset()
    required_components: frozenset = frozenset()
    calls: tuple[str, ...] = ()

    async def query(self, request: QueryRequest, context: Any) -> QueryResponse:
        results = [QueryResult(id=f"{self.mode}-hit", text=f"{request.text} via {self.mode}", score=1.0)]
        for mode in self.calls:
            nested = await context.query(request.text, mode=mode, top_k=2)
            results.extend(nested.results)
        return QueryResponse(results=results)


@attrs.frozen
class PublishAsset:
    """A step that builds nothing but publishes an asset, so availability can be tested."""

    name: ClassVar[str] = "publish_asset"
    kind: str = "custom_index"
    asset_name: str = "alpha"

    @property
    def requirements(self):
        return StepRequirements()

    @property
    def capabilities(self):
        return StepCapabilities(search_assets=(SearchAsset(kind=self.kind, name=self.asset_name, store="stores.objects"),))

    async def run(self, context):
        pass

    def cleanup_plan(self, artifacts):
        return StepCleanupPlan()


def test_asset_ref_name_matching():
    alpha = SearchAsset(kind="graph_tables", name="alpha", store="stores.graph")
    assert SearchAssetRef("graph_tables").matches(alpha)
    assert SearchAssetRef("graph_tables", "alpha").matches(alpha)
    assert not SearchAssetRef("graph_tables", "beta").matches(alpha)
    assert not SearchAssetRef("chunk_vector_index").matches(alpha)

    registry = QueryEngineRegistry(
        [
            Engine("any_name", frozenset({SearchAssetRef("graph_tables")})),
            Engine("named_beta", frozenset({SearchAssetRef("graph_tables", "beta")})),
            Engine("needs_llm", frozenset({SearchAssetRef("graph_tables")}), frozenset({model_ref("language")})),
        ]
    )
    assert registry.available_modes([alpha]) == ["any_name", "needs_llm"]  # components unchecked
    assert registry.available_modes([alpha], components=[]) == ["any_name"]
    assert registry.available_modes([alpha], components=["models.language"]) == ["any_name", "needs_llm"]
    assert registry.missing(registry.get("named_beta"), [alpha]) == ["asset graph_tables:beta is not built"]


async def test_custom_engine_is_queried_only_after_its_asset_is_built(tmp_path, docs_dir):
    engine = Engine("custom_search", frozenset({SearchAssetRef("custom_index", "alpha")}))
    registry = make_registry(inline_plugin(query_engines=[engine], steps=[PublishAsset]))
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(steps=[PublishAsset()]), registry=registry)
    assert "custom_search" not in kb.available_queries
    with pytest.raises(ModeUnavailableError, match="asset custom_index:alpha is not built"):
        await kb.query("hello", mode="custom_search")
    await kb.build([docs_dir])
    assert "custom_search" in kb.available_queries
    response = await kb.query("hello", mode="custom_search")
    assert response.results[0].text == "hello via custom_search"
    # the asset survives a reload
    reloaded = KnowledgeBase.load(tmp_path / "kb", registry=registry)
    assert "custom_search" in reloaded.available_queries


async def test_unavailable_mode_names_component_and_provider(tmp_path):
    engine = Engine("needs_llm", frozenset(), frozenset({model_ref("language")}))
    registry = make_registry(inline_plugin(query_engines=[engine]))
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(), registry=registry)
    with pytest.raises(ModeUnavailableError) as error:
        await kb.query("x", mode="needs_llm")
    assert "component models.language is not in the recipe" in str(error.value)
    assert "[models.language]" in str(error.value)
    assert kb.unavailable_queries()["needs_llm"] == ["component models.language is not in the recipe"]
    with pytest.raises(UnknownNameError, match="Unknown query mode 'nope'"):
        await kb.query("x", mode="nope")


async def test_recursion_is_detected_with_the_chain(tmp_path):
    registry = make_registry(
        inline_plugin(query_engines=[Engine("mode_a", calls=("mode_b",)), Engine("mode_b", calls=("mode_a",))])
    )
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(), registry=registry)
    with pytest.raises(QueryRecursionError, match="mode_a -> mode_b -> mode_a"):
        await kb.query("loop", mode="mode_a")


async def test_nested_calls_appear_in_the_trace(tmp_path):
    registry = make_registry(
        inline_plugin(
            query_engines=[
                Engine("outer", calls=("left", "right")),
                Engine("left", calls=("leaf",)),
                Engine("right"),
                Engine("leaf"),
            ]
        )
    )
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(), registry=registry)
    response = await kb.query("q", mode="outer", trace=True)
    tree = response.trace.to_dict()
    assert tree["mode"] == "outer"
    assert [c["mode"] for c in tree["children"]] == ["left", "right"]
    assert [c["mode"] for c in tree["children"][0]["children"]] == ["leaf"]
    assert tree["result_count"] == 4
    untraced = await kb.query("q", mode="outer")
    assert untraced.trace is None


@attrs.frozen
class AliasedEngine(Engine):
    aliases: tuple[str, ...] = ()


async def test_an_alias_runs_its_mode_and_heta_modes_lists_it(tmp_path):
    from heta_framework.cli.querying import mode_rows

    engine = AliasedEngine("graphish_search", aliases=("graph_ish_query", "old_graphish"))
    kb = KnowledgeBase.create(tmp_path / "kb", Recipe(), registry=make_registry(inline_plugin(query_engines=[engine])))
    response = await kb.query("hello", mode="graph_ish_query", trace=True)
    assert response.metadata["mode"] == "graphish_search" and response.trace.mode == "graphish_search"
    assert response.results[0].text == "hello via graphish_search"
    assert kb.available_queries.count("graphish_search") == 1 and "graph_ish_query" not in kb.available_queries
    assert {r["mode"]: r["aliases"] for r in mode_rows(kb)}["graphish_search"] == ["graph_ish_query", "old_graphish"]
    with pytest.raises(UnknownNameError, match="Did you mean 'graph_ish_query'"):
        await kb.query("x", mode="graph_ish_querry")


def test_an_alias_cannot_shadow_a_mode_or_another_alias():
    registry = QueryEngineRegistry([Engine("vector_search")])
    with pytest.raises(ValueError, match="alias 'vector_search'"):
        registry.register(AliasedEngine("other_search", aliases=("vector_search",)))
    registry.register(AliasedEngine("second_search", aliases=("second",)))
    with pytest.raises(ValueError, match="alias 'second'"):
        registry.register(AliasedEngine("third_search", aliases=("second",)))
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(Engine("second"))
    assert registry.canonical("second") == "second_search" and registry.get("second").mode == "second_search"
