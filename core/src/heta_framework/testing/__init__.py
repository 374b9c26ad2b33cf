"""Helpers for plugin authors' tests: register a plugin in-process, without installing it.

::

    from heta_framework.testing import make_registry, inline_plugin

    registry = make_registry(my_plugin_module)               # a module with @hookimpl functions
    registry = make_registry(inline_plugin(query_engines=[MyEngine()], steps=[MyStep]))
    kb = KnowledgeBase.create(tmp_path / "kb", recipe, registry=registry)
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType
from typing import Any

from heta_framework.errors import did_you_mean
from heta_framework.plugins.hookspecs import hookimpl
from heta_framework.plugins.registry import CATEGORIES, PluginRegistry


def import_installed(name: str) -> ModuleType:
    """Import the installed package ``name``, not a repository folder of the same name.

    Run from a checkout, pytest (``--import-mode=importlib``) can register a
    distribution's folder (``heta_plugin_graph/``, no ``__init__.py``) as a namespace
    module that hides the real package under ``src/``. A conftest calls this first.
    """
    import importlib
    import sys

    placeholder = sys.modules.get(name)
    if placeholder is not None and getattr(placeholder, "__file__", None) is None:
        del sys.modules[name]
    return importlib.import_module(name)


def make_registry(*plugins: ModuleType | object | str, strict: bool = True) -> PluginRegistry:
    """Core's built-in plugin plus ``plugins`` (modules, plugin objects or dotted names)."""
    return PluginRegistry.from_plugins(plugins, strict=strict)


class _InlinePlugin:
    """One ``@hookimpl`` per hook in ``hookspecs``, made here: a new hook needs no edit in this class."""

    def __init__(self, name: str, registrations: dict[str, list[Any]]):
        self.__name__ = name
        for hook_name, category in CATEGORIES.items():
            setattr(self, hook_name, _emitting(registrations.get(category, ())))


def _emitting(items: Iterable[Any]) -> Any:
    items = list(items)

    @hookimpl
    def register(register: Any) -> None:
        for item in items:
            register(item)

    return register


def inline_plugin(name: str = "inline-test-plugin", **registrations: Iterable[Any]) -> object:
    """A plugin object that registers exactly the given things; pass it to ``make_registry``.

    Keywords are the registry's categories, one per hook: ``steps``, ``query_engines``,
    ``stores``, ``model_providers``, ``parsers``, ``procedures``.
    """
    unknown = sorted(set(registrations) - set(CATEGORIES.values()))
    if unknown:
        raise TypeError(f"inline_plugin() got unknown categories {unknown}. {did_you_mean(unknown[0], CATEGORIES.values())}".strip())
    return _InlinePlugin(name, {category: list(items) for category, items in registrations.items()})
