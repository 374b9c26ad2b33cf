"""Plugin discovery: hook specifications, the ``PluginRegistry``, and hints about who provides what."""

from heta_framework.plugins.hookspecs import hookimpl
from heta_framework.plugins.registry import PluginInfo, PluginRegistry

__all__ = ["PluginInfo", "PluginRegistry", "hookimpl"]
