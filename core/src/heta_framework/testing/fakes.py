"""In-process stand-ins for testing *composed* query engines without building real indexes.

A composed engine (fusion, rewriting, multi-hop) is tested on its own logic when
its base modes return known, fixed results. ``FixedResultsEngine`` is such a
base mode, and ``PublishSearchAssets`` is a build step that only declares the
search assets those modes need, so the composed modes become available::

    vector = FixedResultsEngine("vector_search", {"whales": [whale_chunk, krill_chunk]},
                                required_assets=[SearchAssetRef("chunk_vector_index")])
    registry = make_registry(inline_plugin(query_engines=[vector, ...], steps=[PublishSearchAssets]))
    recipe = Recipe(steps=[PublishSearchAssets(kinds=("chunk_vector_index", ...))])

Real base modes come from their plugins; use these only to pin down what a
composed engine does with given base results.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from heta_framework.contracts.search import QueryContext, QueryRequest, QueryResponse, QueryResult, SearchAsset, SearchAssetRef
from heta_framework.contracts.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements

__all__ = ["FixedResultsEngine", "PublishSearchAssets", "fake_knowledge_base"]


class FixedResultsEngine:
    """A query mode that answers each known query text with fixed results (best first).

    Unknown texts get ``default`` (no results unless given). ``calls`` records
    every request, so tests can check what a composed engine asked for.
    ``top_k`` is honoured, and every result gets this mode in its ``sources``.
    """

    def __init__(
        self,
        mode: str,
        results: Mapping[str, Sequence[QueryResult]],
        *,
        required_assets: Iterable[SearchAssetRef] = (),
        default: Sequence[QueryResult] = (),
        issues: Sequence[Mapping[str, Any]] = (),
    ):
        self.mode = mode
        self.required_assets = frozenset(required_assets)
        self._results = {text: tuple(found) for text, found in results.items()}
        self._default = tuple(default)
        self._issues = [dict(issue) for issue in issues]
        self.calls: list[QueryRequest] = []

    async def query(self, request: QueryRequest, context: QueryContext) -> QueryResponse:
        self.calls.append(request)
        found = self._results.get(request.text, self._default)[: request.top_k]
        results = [attrs.evolve(result, sources=result.sources or (self.mode,)) for result in found]
        metadata = {"issues": list(self._issues)} if self._issues else {}
        return QueryResponse(results=results, metadata=metadata)


@attrs.frozen
class PublishSearchAssets:
    """A build step that builds nothing and declares search assets of the given kinds (store ``stores.objects``)."""

    name: ClassVar[str] = "publish_search_assets"

    kinds: tuple[str, ...] = ("chunk_vector_index", "chunk_full_text_index", "graph_tables", "graph_vector_index")

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements()

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(
            artifacts=frozenset({"published_search_assets"}),
            search_assets=tuple(SearchAsset(kind=kind, name="fake", store="stores.objects") for kind in self.kinds),
        )

    async def run(self, context: StepContextProtocol) -> None:
        context.set_artifact("published_search_assets", list(self.kinds))

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return StepCleanupPlan()


async def fake_knowledge_base(
    path: Any,
    engines: Iterable[Any],
    *,
    models: Any = None,
    plugins: Iterable[object] = (),
    kinds: tuple[str, ...] = PublishSearchAssets().kinds,
) -> Any:
    """A built knowledge base whose base modes are ``engines`` (e.g. ``FixedResultsEngine``s).

    It publishes search assets of ``kinds`` so the composed modes are available;
    ``models`` (a ``KnowledgeModels``) and further ``plugins`` (e.g. a model
    provider plugin) go into the recipe and the registry.
    """
    from heta_framework.kb import KnowledgeBase, KnowledgeModels, Recipe, SourceDocument
    from heta_framework.testing import inline_plugin, make_registry

    registry = make_registry(inline_plugin("fake-base-modes", query_engines=list(engines), steps=[PublishSearchAssets]), *plugins)
    recipe = Recipe(models=models or KnowledgeModels(), steps=[PublishSearchAssets(kinds=kinds)])
    kb = KnowledgeBase.create(path, recipe, registry=registry)
    await kb.build([SourceDocument(text="a placeholder document", id="placeholder")])
    return kb
