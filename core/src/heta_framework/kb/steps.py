"""The public import path of ``heta_framework.contracts.steps`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.components import ComponentKind, ComponentRef, model_ref, parser_ref, store_ref
from heta_framework.contracts.steps import (
    IssueResolution,
    IssueSubject,
    KnowledgeStepProtocol,
    ProcedureProtocol,
    Severity,
    StepCapabilities,
    StepCleanupPlan,
    StepContextProtocol,
    StepIssue,
    StepRequirements,
)

__all__ = [
    "ComponentKind",
    "ComponentRef",
    "IssueResolution",
    "IssueSubject",
    "KnowledgeStepProtocol",
    "ProcedureProtocol",
    "Severity",
    "StepCapabilities",
    "StepCleanupPlan",
    "StepContextProtocol",
    "StepIssue",
    "StepRequirements",
    "model_ref",
    "parser_ref",
    "store_ref",
]
