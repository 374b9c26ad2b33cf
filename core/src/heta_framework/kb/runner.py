"""The public import path of ``heta_framework.runtime.runner`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.runtime.runner import (
    INITIAL_ARTIFACTS,
    conflicting_steps,
    documents_to_retry,
    run_steps,
    step_key,
    validate_steps,
)

__all__ = ["INITIAL_ARTIFACTS", "conflicting_steps", "documents_to_retry", "run_steps", "step_key", "validate_steps"]
