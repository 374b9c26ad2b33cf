"""The plugin's hook implementations: one ``register(...)`` line per store type, each from its own module."""

from __future__ import annotations

from heta_framework.plugins.hookspecs import hookimpl


@hookimpl
def register_stores(register):
    pass
