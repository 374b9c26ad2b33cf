"""Names a package exports but imports only when first asked for.

Plugin discovery imports every plugin's package on every ``heta`` command, so a
package that imports an SDK at the top (openai, cohere, httpx) makes every command
slower, whether or not a recipe uses it. Such a package keeps the heavy names out of
its top and sets ``__getattr__ = lazy_attributes(__name__, {...})`` (PEP 562).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``where`` is imported from the module it maps to on
    first use; any other name is an ``AttributeError``, as for a module without the hook."""
    where = dict(where)

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(where[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
