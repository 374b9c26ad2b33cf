"""The public import path of ``heta_framework.contracts.graph_links`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.graph_links import chunk_links, chunk_links_from_reads

__all__ = ["chunk_links", "chunk_links_from_reads"]
