"""The query engines a knowledge base can use, keyed by mode, and why a mode is unavailable.

A mode is available exactly when the knowledge base has built every asset its engine
requires and the recipe has every component it requires (``heta_framework.contracts.search``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from heta_framework.contracts.search import QueryEngineProtocol, SearchAsset, required_components
from heta_framework.errors import ModeUnavailableError, UnknownNameError, did_you_mean
from heta_framework.plugins.known import provider_hint


def mode_aliases(engine: QueryEngineProtocol) -> tuple[str, ...]:
    """Other names the engine answers to (an engine's optional ``aliases``: the names users of another framework know)."""
    return tuple(getattr(engine, "aliases", ()) or ())


class QueryEngineRegistry:
    """The query engines a knowledge base can use, keyed by mode; an engine's aliases lead to its mode."""

    def __init__(self, engines: Iterable[QueryEngineProtocol] = (), *, providers: Mapping[str, str] | None = None):
        self._engines: dict[str, QueryEngineProtocol] = {}
        self._aliases: dict[str, str] = {}
        self._providers: dict[str, str] = dict(providers or {})
        for engine in engines:
            self.register(engine)

    def register(self, engine: QueryEngineProtocol, provider: str = "") -> None:
        if engine.mode in self._engines or engine.mode in self._aliases:
            raise ValueError(f"query mode {engine.mode!r} is registered twice")
        for alias in mode_aliases(engine):
            if alias in self._engines or alias in self._aliases or alias == engine.mode:
                raise ValueError(f"query mode alias {alias!r} of {engine.mode!r} is already a mode or an alias")
        self._engines[engine.mode] = engine
        self._aliases.update(dict.fromkeys(mode_aliases(engine), engine.mode))
        if provider:
            self._providers[engine.mode] = provider

    def canonical(self, mode: str) -> str:
        """The mode ``mode`` names: itself, or the mode it is an alias of."""
        return self._aliases.get(mode, mode)

    def aliases_of(self, mode: str) -> list[str]:
        return [alias for alias, target in self._aliases.items() if target == mode]

    def get(self, mode: str) -> QueryEngineProtocol:
        try:
            return self._engines[self.canonical(mode)]
        except KeyError:
            raise UnknownNameError(f"Unknown query mode {mode!r}. {did_you_mean(mode, [*self._engines, *self._aliases])}") from None

    def provider_of(self, mode: str) -> str:
        return self._providers.get(mode, "")

    @property
    def modes(self) -> list[str]:
        return list(self._engines)

    def missing(
        self,
        engine: QueryEngineProtocol,
        assets: Iterable[SearchAsset],
        components: Iterable[str] | None = None,
    ) -> list[str]:
        """Why ``engine`` is unavailable: each missing asset and component, as text (empty = available)."""
        assets = list(assets)
        reasons = [
            f"asset {ref} is not built"
            for ref in engine.required_assets
            if not any(ref.matches(asset) for asset in assets)
        ]
        if components is not None:
            have = set(components)
            reasons += [
                f"component {ref.key} is not in the recipe"
                for ref in sorted(required_components(engine), key=lambda r: r.key)
                if ref.key not in have
            ]
        return sorted(reasons)

    def available_modes(self, assets: Iterable[SearchAsset], components: Iterable[str] | None = None) -> list[str]:
        assets = list(assets)
        components = None if components is None else list(components)
        return [mode for mode, engine in self._engines.items() if not self.missing(engine, assets, components)]


def check_available(registry: QueryEngineRegistry, engine: QueryEngineProtocol, assets: Iterable[SearchAsset], components: Iterable[str]) -> None:
    """Raise ``ModeUnavailableError`` naming each missing asset/component and what provides it."""
    reasons = registry.missing(engine, assets, components)
    if reasons:
        hints = [provider_hint(reason) for reason in reasons]
        detail = "\n".join(f"  - {r}{h}" for r, h in zip(reasons, hints))
        raise ModeUnavailableError(
            f"Query mode {engine.mode!r} is not available in this knowledge base:\n{detail}"
        )
