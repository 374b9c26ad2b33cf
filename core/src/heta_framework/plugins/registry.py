"""``PluginRegistry``: everything the installed plugins registered, and what failed to load.

There is no module-level global: build a registry (from entry points, or from an
explicit plugin list in tests) and pass it down. Core's built-in plugin is
always registered first, through the same hooks as every other plugin.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Iterable
from importlib import metadata
from types import ModuleType
from typing import Any

import attrs
import pluggy
from packaging.requirements import Requirement

from heta_framework import __version__ as CORE_VERSION
from heta_framework.distribution import CORE_DISTRIBUTION, check_core_distribution
from heta_framework.errors import DuplicateRegistrationError, PluginError, UnknownNameError, did_you_mean
from heta_framework.kb.search import QueryEngineRegistry
from heta_framework.plugins import hookspecs
from heta_framework.plugins.known import KNOWN_PROVIDERS

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "heta"
DEFAULT_PLUGINS = ("heta_framework.builtin.plugin",)

#: hook name -> registry category
CATEGORIES = {
    "register_steps": "steps",
    "register_query_engines": "query_engines",
    "register_stores": "stores",
    "register_model_providers": "model_providers",
    "register_parsers": "parsers",
    "register_procedures": "procedures",
}


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
    reason: str = "import_error"  # or "incompatible"


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
    """Steps, query engines, store types, model providers, parsers and procedures, by name."""

    def __init__(self) -> None:
        self._pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self._pm.add_hookspecs(hookspecs)
        self.items: dict[str, dict[str, Any]] = {category: {} for category in CATEGORIES.values()}
        self._owners: dict[tuple[str, str], str] = {}
        self.plugins: list[PluginInfo] = []
        self.failed: list[FailedPlugin] = []

    # --- construction --------------------------------------------------------------

    @classmethod
    def from_entry_points(cls, *, strict: bool = False) -> PluginRegistry:
        """Core's built-in plugin plus every plugin installed under the ``heta`` entry-point group.

        Raises ``ForeignCoreError`` first when another project's ``heta_framework`` is installed.
        """
        check_core_distribution()
        registry = cls._with_defaults(strict=strict)
        for entry_point in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
            distribution = entry_point.dist.name if entry_point.dist else entry_point.value
            version = entry_point.dist.version if entry_point.dist else ""
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
        """Register one plugin's hook implementations and record what it registered."""
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
        registered: dict[str, list[str]] = {}
        try:
            for hook_name, category in CATEGORIES.items():
                for impl in getattr(self._pm.hook, hook_name).get_hookimpls():
                    if impl.plugin_name != name:
                        continue
                    impl.function(register=self._register_callback(category, distribution, registered))
        except DuplicateRegistrationError:
            raise
        except Exception as exc:
            self._record_failure(name, distribution, f"{type(exc).__name__}: {exc}", "register_error", strict, exc)
            return None
        info = PluginInfo(name=name, distribution=distribution, version=version, registered=registered)
        self.plugins.append(info)
        return info

    def _register_callback(self, category: str, distribution: str, registered: dict[str, list[str]]) -> Callable[[Any], None]:
        def register(item: Any) -> None:
            keys = _registration_names(category, item)
            for key in keys:
                owner = self._owners.get((category, key))
                if owner is not None:
                    what = category[:-1].replace("_", " ")
                    raise DuplicateRegistrationError(
                        f"{what} {key!r} is registered by both {owner!r} and {distribution!r}. "
                        f"Uninstall one of them, or rename the {what} in your plugin."
                    )
            for key in keys:
                self._owners[(category, key)] = distribution
                self.items[category][key] = item
                registered.setdefault(category, []).append(key)

        return register

    def _record_failure(self, name: str, distribution: str, error: str, reason: str, strict: bool, exc: BaseException | None = None) -> None:
        if strict:
            raise PluginError(f"Plugin {name!r} from {distribution!r} failed ({reason}): {error}") from exc
        self.failed.append(FailedPlugin(name=name, distribution=distribution, error=error, reason=reason))
        log.warning("Skipping Heta plugin %r from %s (%s): %s. Run `heta plugins` for details.", name, distribution, reason, error)

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

    def procedure_class(self, name: str) -> type:
        return self._get("procedures", name, "procedure")

    def query_engine(self, mode: str) -> Any:
        return self._get("query_engines", mode, "query mode")

    def store_type(self, slot: str, type_name: str) -> Any:
        return self._get("stores", f"{slot}:{type_name}", "store type")

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
