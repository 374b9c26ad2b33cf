"""The public import path of ``heta_framework.contracts.search`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.search import response_from_dict, response_to_dict

__all__ = ["response_from_dict", "response_to_dict"]
