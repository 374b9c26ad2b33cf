"""The short import for the distribution's name: ``from heta_haystack import HetaRetriever``.

The component lives in ``haystack_integrations.components.retrievers.heta`` (Haystack's
integration namespace, trusted by ``Pipeline.load``), so that is the type ``to_dict`` records.
"""

from haystack_integrations.components.retrievers.heta import HetaRetriever

__all__ = ["HetaRetriever"]
