"""``HetaGraphProcedure`` (``step = "heta_graph"``): the "Heta graph build" / "Heta graph merge" step groups.

It only expands into steps — no context, no store, no run — and the recipe
runner validates and schedules the expanded steps like any others.
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs

from heta_plugin_graph.steps import (
    BuildGraph,
    DeduplicateEntities,
    DeduplicateRelations,
    ExtractEntities,
    ExtractRelations,
    MergeChunks,
    MergeGraphIntoStore,
    RechunkDocuments,
)
from heta_plugin_graph.steps.common import check_extractor, check_positive

MODES = ("build", "merge")


def _check_mode(instance: Any, attribute: attrs.Attribute, value: str) -> None:
    if value not in MODES:
        raise ValueError(f"mode must be 'build' or 'merge', got {value!r}")


@attrs.frozen
class HetaGraphProcedure:
    """Expand to [RechunkDocuments] [MergeChunks] ExtractEntities ExtractRelations DeduplicateEntities
    DeduplicateRelations, then BuildGraph (mode="build") or MergeGraphIntoStore (mode="merge").

    ``extractor="nlp"`` needs no language model: extraction is offline and dedup/merge are exact only.
    ``model`` names the recipe's language model to use (default: the default one).
    """

    name: ClassVar[str] = "heta_graph"

    mode: str = attrs.field(default="build", validator=_check_mode)
    extractor: str = attrs.field(default="llm", validator=check_extractor)
    model: str | None = None
    concurrency: int = attrs.field(default=8, validator=check_positive)
    rechunk: bool = False
    merge_chunks: bool = False
    #: embed entity/relation descriptions with their names; False embeds names only (for nlp graphs
    #: several times cheaper to build, since their entity descriptions are whole sentences)
    embed_descriptions: bool = True

    def expand(self) -> list[Any]:
        use_llm = self.extractor == "llm"
        steps: list[Any] = []
        if self.rechunk:
            steps.append(RechunkDocuments())
        if self.merge_chunks:
            steps.append(MergeChunks())
        steps += [
            ExtractEntities(extractor=self.extractor, model=self.model, concurrency=self.concurrency),
            ExtractRelations(extractor=self.extractor, model=self.model, concurrency=self.concurrency),
            DeduplicateEntities(semantic=use_llm, model=self.model, concurrency=self.concurrency),
            DeduplicateRelations(),
        ]
        if self.mode == "build":
            steps.append(BuildGraph(embed_descriptions=self.embed_descriptions))
        else:
            steps.append(MergeGraphIntoStore(semantic=use_llm, model=self.model, concurrency=self.concurrency, embed_descriptions=self.embed_descriptions))
        return steps
