"""The components a recipe names (models, stores, parsers), opened on first use through the plugins
that provide them, and closed together."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from heta_framework.common.metered_models import metered
from heta_framework.common.usage import UsageMeter
from heta_framework.contracts.documents import ParserSet
from heta_framework.errors import KnowledgeBaseError, UnknownNameError
from heta_framework.runtime.recipe import Recipe, parser_config, validate_executor_options, validate_store_options

if TYPE_CHECKING:
    from heta_framework.plugins.registry import PluginRegistry

log = logging.getLogger(__name__)

RECIPE_FILE = "recipe.toml"


class ComponentSet:
    """``models.*``, ``stores.*`` and ``parsers.*`` keys -> open components, each opened once."""

    def __init__(self, path: Path, recipe: Recipe, registry: PluginRegistry):
        self.path = path
        self.recipe = recipe
        self.registry = registry
        self._open: dict[str, Any] = {}
        self._executor: Any = None
        #: every model call of this knowledge base since it was opened (``KnowledgeBase.usage_totals``)
        self.usage = UsageMeter()

    @functools.cached_property
    def keys(self) -> frozenset[str]:
        """Every key the recipe makes available; the recipe and the registry are fixed, so the keys are too."""
        keys = set(self.recipe.models.components())
        keys |= {f"stores.{slot}" for slot in self.recipe.stores}
        keys |= {f"stores.{s.slot}" for s in self.registry.items["stores"].values() if s.default}
        keys |= {"parsers.documents"} | {f"parsers.{name}" for name in self.recipe.parsers}
        return frozenset(keys)

    @property
    def opened(self) -> dict[str, Any]:
        """The components opened so far (a copy)."""
        return dict(self._open)

    def get(self, key: str) -> Any:
        if key not in self._open:
            self._open[key] = self.open(key)
        return self._open[key]

    def open(self, key: str) -> Any:
        """A new instance of the component ``key`` (not kept: ``get`` keeps the one it opens)."""
        kind, _, rest = key.partition(".")
        if kind == "models":
            config = self.recipe.models.components().get(key)
            if config is None:
                raise KnowledgeBaseError(f"The recipe has no {key}. Add it under [models] in {self.path / RECIPE_FILE}.")
            # metered here, once: every model call is traced and counted whoever makes it (common/metered_models.py)
            return metered(self.registry.model_provider(config.provider, config.kind).create(config), config, self.usage)
        if kind == "stores":
            return self._open_store(key, rest)
        if kind == "parsers":
            return self._open_parsers(rest)
        raise UnknownNameError(f"Unknown component {key!r}: keys start with models., stores. or parsers.")

    def _open_parsers(self, name: str) -> ParserSet:
        """The registered parsers (those ``only`` names), those the recipe gives options configured.

        A parser with file types of its own (``legacy_office``) is configured in its place. One that registers
        none and stands in front of the others (``mineru``) is configured with all the others, configured ones
        included, as its fallbacks, and comes last, so it wins the file types it takes."""
        settings = self.recipe.parsers.get(name)
        only = set(settings.only) if settings is not None else set()
        options = dict(settings.options) if settings is not None else {}
        chosen = [p for p in self.registry.parsers if not only or p.name in only]

        def configured(parser: Any, fallbacks: ParserSet) -> Any:
            config = parser_config(parser.name, options[parser.name], self.registry, f"$.parsers.{name}.options.{parser.name}")
            return parser.configure(config, fallbacks)

        unconfigured = ParserSet([p for p in chosen if p.name not in options])
        local = [configured(p, unconfigured) if p.name in options else p for p in chosen if p.extensions]
        in_front = [configured(p, ParserSet(local)) for p in chosen if p.name in options and not p.extensions]
        return ParserSet([*local, *in_front])

    def _open_store(self, key: str, slot_and_name: str) -> Any:
        store = self.recipe.stores.get(slot_and_name)
        slot = slot_and_name.split(".")[0]
        if store is None:
            defaults = [s for s in self.registry.store_types_for(slot) if s.default]
            if not defaults:
                raise UnknownNameError(f"No store configured for {key} and no plugin provides a default {slot} store.")
            store_type, config = defaults[0], None
            if store_type.config_type is not None:
                config = store_type.config_type()
        else:
            store_type = self.registry.store_type(slot, store.type)
            config = validate_store_options(slot_and_name, store, self.registry, f"$.stores.{slot_and_name}")
        return store_type.factory(config, self.path)

    @property
    def executor(self) -> Any:
        """The recipe's executor (``[executor]``; core's ``local`` when it names none), opened on first use."""
        if self._executor is None:
            config = validate_executor_options(self.recipe.executor, self.registry)
            self._executor = self.registry.executor_type(self.recipe.executor.type if self.recipe.executor else None).factory(config, self.path)
        return self._executor

    def flush_stores(self) -> None:
        for key, component in self._open.items():
            if key.startswith("stores.") and hasattr(component, "flush"):
                component.flush()

    def forget_stores(self, *, close: bool) -> None:
        """Drop the open stores so the next use opens them on what is on disk now. ``close=False`` leaves
        them to the garbage collector: a query still running holds one."""
        for key in [k for k in self._open if k.startswith("stores.")]:
            component = self._open.pop(key)
            if close:
                _close(key, component)

    def close(self) -> None:
        for key, component in list(self._open.items()):
            _close(key, component)
        self._open.clear()
        if self._executor is not None:
            executor, self._executor = self._executor, None
            _close("the executor", executor)


def _close(key: str, component: Any) -> None:
    if hasattr(component, "close"):
        try:
            component.close()
        except Exception:
            log.exception("closing %s failed", key)
