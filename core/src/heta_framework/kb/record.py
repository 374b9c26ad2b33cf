"""The public import path of ``heta_framework.contracts.record`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.record import (
    FORMAT_VERSION,
    BuildReport,
    RunRecord,
    StepReport,
    asset_from_dict,
    asset_to_dict,
    issue_from_dict,
    issue_to_dict,
)

__all__ = [
    "BuildReport",
    "FORMAT_VERSION",
    "RunRecord",
    "StepReport",
    "asset_from_dict",
    "asset_to_dict",
    "issue_from_dict",
    "issue_to_dict",
]
