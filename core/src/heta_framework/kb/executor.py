"""The public import path of ``heta_framework.contracts.executor`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.executor import (
    BatchFailure,
    BatchWork,
    ExecutorProtocol,
    ExecutorType,
    ModelSource,
    OnResult,
    batched,
)

__all__ = ["BatchFailure", "BatchWork", "ExecutorProtocol", "ExecutorType", "ModelSource", "OnResult", "batched"]
