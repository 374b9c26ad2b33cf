"""The public import path of ``heta_framework.runtime.step_context`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.progress import ProgressFactory, ProgressHandle, no_progress
from heta_framework.runtime.step_context import StepContext

__all__ = ["ProgressFactory", "ProgressHandle", "StepContext", "no_progress"]
