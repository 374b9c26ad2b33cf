"""Heta knowledge bases in LangChain: ``from langchain_heta import HetaRetriever``."""

from langchain_heta.retriever import HetaRetriever

__all__ = ["HetaRetriever"]
