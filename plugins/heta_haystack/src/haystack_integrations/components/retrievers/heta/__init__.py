"""Heta knowledge bases in Haystack: ``from haystack_integrations.components.retrievers.heta import HetaRetriever``.

Haystack's own integrations live under the ``haystack_integrations`` namespace, which
``Pipeline.load``/``loads`` trust by default; a pipeline file naming this component loads
without ``allowed_modules``.
"""

from haystack_integrations.components.retrievers.heta.retriever import HetaRetriever

__all__ = ["HetaRetriever"]
