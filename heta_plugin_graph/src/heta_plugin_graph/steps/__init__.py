"""The graph build steps. Each is an attrs frozen class whose fields are its recipe options."""

from heta_plugin_graph.steps.build import BuildGraph
from heta_plugin_graph.steps.dedup import DeduplicateEntities, DeduplicateRelations
from heta_plugin_graph.steps.extract import ExtractEntities, ExtractRelations
from heta_plugin_graph.steps.merge import MergeGraphIntoStore
from heta_plugin_graph.steps.prepare import MergeChunks, RechunkDocuments

ALL_STEPS = (
    MergeChunks,
    RechunkDocuments,
    ExtractEntities,
    ExtractRelations,
    DeduplicateEntities,
    DeduplicateRelations,
    BuildGraph,
    MergeGraphIntoStore,
)

__all__ = [
    "ALL_STEPS",
    "BuildGraph",
    "DeduplicateEntities",
    "DeduplicateRelations",
    "ExtractEntities",
    "ExtractRelations",
    "MergeChunks",
    "MergeGraphIntoStore",
    "RechunkDocuments",
]
