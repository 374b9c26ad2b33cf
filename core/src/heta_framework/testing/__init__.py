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

from heta_framework.plugins.hookspecs import hookimpl
from heta_framework.plugins.registry import PluginRegistry


def make_registry(*plugins: ModuleType | object | str, strict: bool = True) -> PluginRegistry:
    """Core's built-in plugin plus ``plugins`` (modules, plugin objects or dotted names)."""
    return PluginRegistry.from_plugins(plugins, strict=strict)


class _InlinePlugin:
    def __init__(self, name: str, registrations: dict[str, list[Any]]):
        self.__name__ = name
        self._registrations = registrations

    def _emit(self, category: str, register: Any) -> None:
        for item in self._registrations.get(category, ()):
            register(item)

    @hookimpl
    def register_steps(self, register: Any) -> None:
        self._emit("steps", register)

    @hookimpl
    def register_query_engines(self, register: Any) -> None:
        self._emit("query_engines", register)

    @hookimpl
    def register_stores(self, register: Any) -> None:
        self._emit("stores", register)

    @hookimpl
    def register_model_providers(self, register: Any) -> None:
        self._emit("model_providers", register)

    @hookimpl
    def register_parsers(self, register: Any) -> None:
        self._emit("parsers", register)

    @hookimpl
    def register_procedures(self, register: Any) -> None:
        self._emit("procedures", register)


def inline_plugin(
    name: str = "inline-test-plugin",
    *,
    steps: Iterable[type] = (),
    query_engines: Iterable[Any] = (),
    stores: Iterable[Any] = (),
    model_providers: Iterable[Any] = (),
    parsers: Iterable[Any] = (),
    procedures: Iterable[type] = (),
) -> object:
    """A plugin object that registers exactly the given things; pass it to ``make_registry``."""
    return _InlinePlugin(
        name,
        {
            "steps": list(steps),
            "query_engines": list(query_engines),
            "stores": list(stores),
            "model_providers": list(model_providers),
            "parsers": list(parsers),
            "procedures": list(procedures),
        },
    )
