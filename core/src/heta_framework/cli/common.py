"""What several ``heta`` commands share: the plugin registry and opening the ``--kb`` folder."""

from __future__ import annotations

from typing import TYPE_CHECKING

from heta_framework.plugins.registry import PluginRegistry

if TYPE_CHECKING:
    from heta_framework.kb import KnowledgeBase


def registry(strict: bool = False) -> PluginRegistry:
    return PluginRegistry.from_entry_points(strict=strict)


def open_kb(kb_path: str) -> KnowledgeBase:
    from heta_framework.kb import KnowledgeBase

    return KnowledgeBase.load(kb_path, registry=registry())
