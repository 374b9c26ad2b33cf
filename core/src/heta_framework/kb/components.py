"""The public import path of ``heta_framework.contracts.components`` (where the code lives, in its layer: docs/architecture.md)."""

from heta_framework.contracts.components import ComponentAccessors, ComponentAccessProtocol, StoreSlot

__all__ = ["ComponentAccessProtocol", "ComponentAccessors", "StoreSlot"]
