"""The public import path of ``heta_framework.contracts.provenance`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.provenance import describe_location, table_provenance

__all__ = ["describe_location", "table_provenance"]
