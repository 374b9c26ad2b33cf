"""The public import path of ``heta_framework.contracts.state`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.state import CacheProtocol, KnowledgeBaseState, WriterLockProtocol

__all__ = ["CacheProtocol", "KnowledgeBaseState", "WriterLockProtocol"]
