"""Heta knowledge bases in LlamaIndex: ``from llama_index.retrievers.heta import HetaRetriever``."""

from llama_index.retrievers.heta.base import HetaRetriever

__all__ = ["HetaRetriever"]
