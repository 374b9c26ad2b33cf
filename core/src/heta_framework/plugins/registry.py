"""``PluginRegistry``: everything the installed plugins registered, and what failed to load.

There is no module-level global: build a registry (from entry points, or from an
explicit plugin list in tests) and pass it down. Core's built-in plugin is
always registered first, through the same hooks as every other plugin.

Each plugin registers all or nothing: its hooks fill typed registrars
(``heta_framework.plugins.registrars``) and only when every hook returned and no
name is taken are the registrations applied. A plugin that fails (a hook raised,
a misspelled hook, a name another plugin owns) is disabled and listed in
``failed``; the others keep working. ``strict=True`` raises instead.

Environment variables (llm's ``LLM_LOAD_PLUGINS`` and datasette's
``DATASETTE_TRACE_PLUGINS`` are the models):

``HETA_LOAD_PLUGINS``
    Comma-separated entry-point or distribution names: load only these installed
    plugins (core's built-in plugin always loads). Set but empty: load none.
``HETA_TRACE_PLUGINS``
    Any value but ``""``/``0``: log every hook call (plugin, hook, what it
    registered, how long it took) to stderr through the
    ``heta_framework.plugins.trace`` logger.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import time
import typing
from collections.abc import Iterable
from importlib import metadata
from types import ModuleType
from typing import Any

import attrs
import pluggy
from packaging.requirements import Requirement

from heta_framework import __version__ as CORE_VERSION
from heta_framework.distribution import CORE_DISTRIBUTION, check_core_distribution
from heta_framework.errors import DuplicateRegistrationError, PluginError, UnknownNameError, did_you_mean
from heta_framework.plugins import hookspecs
from heta_framework.plugins.known import KNOWN_PROVIDERS
from heta_framework.plugins.query_engines import QueryEngineRegistry
from heta_framework.plugins.registrars import Registrar

log = logging.getLogger(__name__)
trace_log = logging.getLogger("heta_framework.plugins.trace")

LOAD_PLUGINS_VARIABLE = "HETA_LOAD_PLUGINS"
TRACE_PLUGINS_VARIABLE = "HETA_TRACE_PLUGINS"

ENTRY_POINT_GROUP = "heta"
DEFAULT_PLUGINS = ("heta_framework.builtin.plugin",)



def hook_registrars() -> dict[str, type[Registrar]]:
    """Hook name -> the registrar class its ``register`` parameter is annotated with (read from hookspecs)."""
    found: dict[str, type[Registrar]] = {}
    for name in vars(hookspecs):  # definition order: steps first, as plugins list what they register
        function = getattr(hookspecs, name)
        if name.startswith("register_") and callable(function):
            found[name] = typing.get_type_hints(function)["register"]
    return found


#: hook name -> registrar class, and hook name -> registry category
REGISTRARS = hook_registrars()
CATEGORIES = {hook: registrar.category for hook, registrar in REGISTRARS.items()}


@attrs.frozen
class PluginInfo:
    name: str
    distribution: str
    version: str
    registered: dict[str, list[str]] = attrs.field(factory=dict)


@attrs.frozen
class FailedPlugin:
    name: str
    distribution: str
    error: str
    #: import_error, incompatible, invalid_hook, unknown_hook, register_error or duplicate
    reason: str = "import_error"


def _registration_names(category: str, item: Any) -> list[str]:
    """The registry keys of one registered item.

    Model providers are keyed per kind, so ``local`` embeddings (heta-plugin-local)
    and ``local`` cross-encoders (heta-plugin-rerank) can both exist.
    """
    if category == "query_engines":
        return [item.mode]
    if category == "stores":
        return [f"{item.slot}:{item.name}"]
    if category == "model_providers":
        return [f"{kind}:{item.name}" for kind in sorted(item.kinds)]
    return [item.name]


class PluginRegistry:
    """Steps, query engines, store types, model providers, parsers, procedures and executors, by name."""

    def __init__(self) -> None:
        self._pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._pm.add_hookspecs(hookspecs)
        self.items: dict[str, dict[str, Any]] = {category: {} for category in CATEGORIES.values()}
        self._owners: dict[tuple[str, str], str] = {}
        self.plugins: list[PluginInfo] = []
        self.failed: list[FailedPlugin] = []

    # --- construction --------------------------------------------------------------

    @classmethod
    def from_entry_points(cls, *, strict: bool = False, only: Iterable[str] | None = None) -> PluginRegistry:
        """Core's built-in plugin plus every plugin installed under the ``heta`` entry-point group.

        ``only``: load just these plugins (entry-point or distribution names), as an executor's worker does
        that needs one model provider and should not pay for importing every plugin.
        Raises ``ForeignCoreError`` first when another project's ``heta_framework`` is installed.
        """
        check_core_distribution()
        registry = cls._with_defaults(strict=strict)
        wanted = _plugins_to_load()
        if only is not None:
            chosen = {_normalise(name) for name in only}
            wanted = chosen if wanted is None else wanted & chosen
        for entry_point in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
            distribution = entry_point.dist.name if entry_point.dist else entry_point.value
            version = entry_point.dist.version if entry_point.dist else ""
            if wanted is not None and not {_normalise(entry_point.name), _normalise(distribution)} & wanted:
                _trace("skipping plugin %r (%s): not in %s", entry_point.name, distribution, LOAD_PLUGINS_VARIABLE)
                continue
            incompatible = _incompatibility(entry_point.dist) if entry_point.dist else None
            if incompatible:
                registry._record_failure(entry_point.name, distribution, incompatible, "incompatible", strict)
                continue
            try:
                module = entry_point.load()
            except Exception as exc:  # a broken plugin must not stop the others
                registry._record_failure(entry_point.name, distribution, f"{type(exc).__name__}: {exc}", "import_error", strict, exc)
                continue
            registry.add_plugin(module, name=entry_point.name, distribution=distribution, version=version, strict=strict)
        return registry

    @classmethod
    def from_plugins(cls, plugins: Iterable[ModuleType | object | str] = (), *, strict: bool = True) -> PluginRegistry:
        """Core's built-in plugin plus the given plugin modules/objects (or dotted module names)."""
        registry = cls._with_defaults(strict=strict)
        for plugin in plugins:
            if isinstance(plugin, str):
                plugin = importlib.import_module(plugin)
            registry.add_plugin(plugin, strict=strict)
        return registry

    @classmethod
    def _with_defaults(cls, *, strict: bool) -> PluginRegistry:
        registry = cls()
        for module_name in DEFAULT_PLUGINS:
            registry.add_plugin(
                importlib.import_module(module_name),
                name="builtin",
                distribution=CORE_DISTRIBUTION,
                version=CORE_VERSION,
                strict=True,
            )
        return registry

    def add_plugin(
        self,
        plugin: ModuleType | object,
        *,
        name: str | None = None,
        distribution: str | None = None,
        version: str = "",
        strict: bool = True,
    ) -> PluginInfo | None:
        """Register one plugin's hook implementations, all or nothing, and record what it registered.

        Returns ``None`` (and records the plugin in ``failed``) when the plugin is
        disabled; with ``strict`` that raises instead.
        """
        name = name or getattr(plugin, "__name__", type(plugin).__name__)
        distribution = distribution or name
        try:
            self._pm.register(plugin, name=name)
        except ValueError as exc:
            raise PluginError(f"Plugin {name!r} ({distribution}) is registered twice: {exc}") from exc
        except pluggy.PluginValidationError as exc:
            self._pm.unregister(name=name) if self._pm.has_plugin(name) else None
            self._record_failure(name, distribution, str(exc), "invalid_hook", strict, exc)
            return None
        unknown = self._unknown_hooks(name)
        if unknown:
            self._pm.unregister(name=name)
            hints = "; ".join(f"{hook!r} is not a Heta hook. {did_you_mean(hook, REGISTRARS)}".strip() for hook in unknown)
            self._record_failure(name, distribution, hints, "unknown_hook", strict)
            return None
        pending: list[tuple[str, Any]] = []
        try:
            for hook_name, registrar_type in REGISTRARS.items():
                for impl in getattr(self._pm.hook, hook_name).get_hookimpls():
                    if impl.plugin_name == name:
                        self._call_hook(impl.function, registrar_type, pending, distribution, hook_name)
        except Exception as exc:  # noqa: BLE001  (a plugin's bug must not stop the others)
            # nothing was applied yet: the plugin simply does not exist for this registry
            self._pm.unregister(name=name)
            self._record_failure(name, distribution, f"{type(exc).__name__}: {exc}", "register_error", strict, exc)
            return None
        clash = self._first_clash(pending, distribution)
        if clash:
            self._pm.unregister(name=name)
            if strict:
                raise DuplicateRegistrationError(clash)
            self._record_failure(name, distribution, clash, "duplicate", strict=False)
            return None
        registered: dict[str, list[str]] = {}
        for category, item in pending:
            for key in _registration_names(category, item):
                self._owners[(category, key)] = distribution
                self.items[category][key] = item
                registered.setdefault(category, []).append(key)
        info = PluginInfo(name=name, distribution=distribution, version=version, registered=registered)
        self.plugins.append(info)
        return info

    def _unknown_hooks(self, name: str) -> list[str]:
        """``@hookimpl`` functions of plugin ``name`` that match no hook (pluggy's ``check_pending``)."""
        try:
            self._pm.check_pending()
        except pluggy.PluginValidationError:
            return sorted(
                hook_name
                for hook_name, caller in vars(self._pm.hook).items()
                if isinstance(caller, pluggy.HookCaller) and not caller.has_spec()
                and any(impl.plugin_name == name for impl in caller.get_hookimpls())
            )
        return []

    def _call_hook(self, function: Any, registrar_type: type[Registrar], pending: list[tuple[str, Any]], distribution: str, hook_name: str) -> None:
        before = len(pending)
        started = time.perf_counter()
        try:
            function(register=registrar_type(lambda category, item: pending.append((category, item))))
        except Exception as exc:
            _trace("%s %s raised %s: %s", distribution, hook_name, type(exc).__name__, exc)
            raise
        names = [key for category, item in pending[before:] for key in _registration_names(category, item)]
        _trace("%s %s registered %s in %.1f ms", distribution, hook_name, names, (time.perf_counter() - started) * 1000)

    def _first_clash(self, pending: list[tuple[str, Any]], distribution: str) -> str | None:
        """A message naming both owners when one of ``pending``'s names is taken (or repeated), else ``None``."""
        seen: set[tuple[str, str]] = set()
        for category, item in pending:
            for key in _registration_names(category, item):
                what = category[:-1].replace("_", " ")
                owner = self._owners.get((category, key)) or (distribution if (category, key) in seen else None)
                if owner is not None:
                    return (
                        f"{what} {key!r} of {distribution!r} is already registered by {owner!r}, so {distribution!r} "
                        f"is disabled. Uninstall one of them, or rename the {what} in your plugin."
                    )
                seen.add((category, key))
        return None

    def _record_failure(self, name: str, distribution: str, error: str, reason: str, strict: bool, exc: BaseException | None = None) -> None:
        if strict:
            raise PluginError(f"Plugin {name!r} from {distribution!r} failed ({reason}): {error}") from exc
        self.failed.append(FailedPlugin(name=name, distribution=distribution, error=error, reason=reason))
        log.warning("Skipping Heta plugin %r from %s (%s): %s. Run `heta plugins` for details.", name, distribution, reason, error.rstrip("."))

    # --- lookups -------------------------------------------------------------------

    def owner(self, category: str, name: str) -> str:
        return self._owners.get((category, name), "")

    def _get(self, category: str, name: str, what: str) -> Any:
        try:
            return self.items[category][name]
        except KeyError:
            hint = KNOWN_PROVIDERS.get(name.split(":")[-1])
            install = f" It is usually provided by {hint}: install that plugin." if hint else ""
            raise UnknownNameError(f"Unknown {what} {name!r}.{install} {did_you_mean(name, self.items[category])}") from None

    def step_class(self, name: str) -> type:
        return self._get("steps", name, "step")

    def query_engine(self, mode: str) -> Any:
        return self._get("query_engines", mode, "query mode")

    def store_type(self, slot: str, type_name: str) -> Any:
        return self._get("stores", f"{slot}:{type_name}", "store type")

    def executor_type(self, name: str | None) -> Any:
        """The executor registered as ``name``; ``None``: the default one (core's ``local``)."""
        if name is None:
            return next(e for e in self.items["executors"].values() if e.default)
        return self._get("executors", name, "executor")

    def store_types_for(self, slot: str) -> list[Any]:
        return [s for s in self.items["stores"].values() if s.slot == slot]

    def model_provider(self, name: str, kind: str) -> Any:
        """The provider for ``provider/...`` models of ``kind`` (embedding, language, reranker)."""
        return self._get("model_providers", f"{kind}:{name}", f"{kind} model provider")

    def model_provider_names(self) -> set[str]:
        return {key.split(":", 1)[1] for key in self.items["model_providers"]}

    @property
    def parsers(self) -> list[Any]:
        return list(self.items["parsers"].values())

    def query_engine_registry(self) -> QueryEngineRegistry:
        registry = QueryEngineRegistry()
        for mode, engine in self.items["query_engines"].items():
            registry.register(engine, provider=self.owner("query_engines", mode))
        return registry


def _normalise(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def _plugins_to_load() -> set[str] | None:
    """The plugin names ``HETA_LOAD_PLUGINS`` allows, or ``None`` when it is not set (load all)."""
    value = os.environ.get(LOAD_PLUGINS_VARIABLE)
    if value is None:
        return None
    return {_normalise(name) for name in value.split(",") if name.strip()}


def _trace(message: str, *args: Any) -> None:
    if os.environ.get(TRACE_PLUGINS_VARIABLE, "") in ("", "0"):
        return
    if not trace_log.handlers:  # asked for on the command line: show it even where logging is not configured
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("heta plugin trace: %(message)s"))
        trace_log.addHandler(handler)
        trace_log.setLevel(logging.INFO)
        trace_log.propagate = False
    trace_log.info(message, *args)


class _CurrentStderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is when a record comes (it may be replaced after start-up)."""

    def emit(self, record: logging.LogRecord) -> None:
        sys.stderr.write(self.format(record) + "\n")


def _incompatibility(dist: metadata.Distribution) -> str | None:
    """A message when ``dist`` declares a heta-core range the installed core is not in."""
    for line in dist.requires or ():
        try:
            requirement = Requirement(line)
        except Exception:
            continue
        if requirement.name.lower().replace("_", "-") != CORE_DISTRIBUTION or requirement.marker:
            continue
        if requirement.specifier and not requirement.specifier.contains(CORE_VERSION, prereleases=True):
            return (
                f"{dist.name} {dist.version} supports heta-core{requirement.specifier}, "
                f"but {CORE_VERSION} is installed. Install a release of {dist.name} built for this core "
                f"(pip install -U {dist.name}) or a matching heta-core."
            )
    return None
