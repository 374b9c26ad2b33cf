"""``BuildGraph``: write the run's deduplicated graph into ``stores.graph`` and ``stores.vector``.

Publishes ``graph_tables`` and ``graph_vector_index`` and unlocks
``heta_graph_search``. Documents of the run replace what they said in earlier
builds; facts no chunk supports any more are removed. Entity and relation
vectors are only computed for facts that are new or whose text changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs
from heta_framework.kb.steps import StepCapabilities, StepCleanupPlan, StepContextProtocol, StepRequirements, model_ref, store_ref

from heta_plugin_graph.assets import GRAPH_ASSETS, GRAPH_SEARCH_MODE
from heta_plugin_graph.deletion import delete_graph_documents, preview_graph_removal
from heta_plugin_graph.steps.common import EXTRACTION_KEYS, check_positive
from heta_plugin_graph.steps.dedup import load_draft
from heta_plugin_graph.vectors import EMBED_CONCURRENCY, ENTITY_COLLECTION, RELATION_COLLECTION
from heta_plugin_graph.writer import write_draft

GRAPH_STORE_ARTIFACT = "graph_store"

GRAPH_COMPONENTS = frozenset({store_ref("graph"), store_ref("vector"), store_ref("objects"), model_ref("embedding")})


def graph_paths(context: Any) -> list[str]:
    vector_store = context.store("vector")
    paths = list(context.store("graph").relative_paths())
    for name in (ENTITY_COLLECTION, RELATION_COLLECTION):
        if vector_store.has_collection(name):
            paths += vector_store.relative_paths(name)
    return paths


def graph_cleanup(artifacts: Mapping[str, Any]) -> StepCleanupPlan:
    paths = tuple((artifacts.get(GRAPH_STORE_ARTIFACT) or {}).get("paths", ()))
    return StepCleanupPlan(paths=paths, description="graph tables (SQLite) and graph vector collections")


@attrs.frozen
class BuildGraph:
    """Write entities, relations and their evidence; embed the new ones.

    ``embed_descriptions=False`` embeds only names (``name (type)``, ``A relation B``):
    the nlp extractor's entity descriptions are whole sentences, so embedding names
    only makes its graphs several times cheaper to build. A co-occurrence is embedded
    as its sentence either way (see ``vectors.relation_text``).
    ``concurrency`` bounds the embedding batches in flight at once (default 4, as
    ``embed_chunks``): a remote provider's round trips overlap; a local model runs them one after another.
    """

    name: ClassVar[str] = "build_graph"

    embed_descriptions: bool = True
    #: embedding batches sent to the model at the same time (a bound, so a remote API is not flooded)
    concurrency: int = attrs.field(default=EMBED_CONCURRENCY, validator=check_positive)

    @property
    def requirements(self) -> StepRequirements:
        return StepRequirements(components=GRAPH_COMPONENTS, artifacts=frozenset({EXTRACTION_KEYS}))

    @property
    def capabilities(self) -> StepCapabilities:
        return StepCapabilities(
            artifacts=frozenset({GRAPH_STORE_ARTIFACT}),
            queries=frozenset({GRAPH_SEARCH_MODE}),
            search_assets=GRAPH_ASSETS,
        )

    async def run(self, context: StepContextProtocol) -> None:
        await write_draft(context, load_draft(context), embed_descriptions=self.embed_descriptions,
                          concurrency=self.concurrency)
        context.set_artifact(GRAPH_STORE_ARTIFACT, {"paths": graph_paths(context), **context.store("graph").counts()})

    def cleanup_plan(self, artifacts: Mapping[str, Any]) -> StepCleanupPlan:
        return graph_cleanup(artifacts)

    async def delete_documents(self, context: StepContextProtocol, document_ids: list[str]) -> None:
        await delete_graph_documents(context, document_ids)

    async def preview_removal(self, context: StepContextProtocol, document_ids: list[str]) -> dict[str, int]:
        return await preview_graph_removal(context, document_ids)
