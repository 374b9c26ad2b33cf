"""Libraries a recipe may need that an install can lack: jieba (the ``[chinese]`` extra) and tantivy.

tantivy is a dependency since the starter recipe uses it, but an environment may still
lack it (a platform without its wheel, an install with ``--no-deps``): a recipe that needs
either gets an error naming what to install, when the recipe is validated.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

DISTRIBUTION = "heta-plugin-fulltext"


def missing_message(module: str, extra: str, what: str) -> str:
    """``extra`` empty: the module is a dependency of the plugin that this environment lacks."""
    command = f"pip install '{DISTRIBUTION}[{extra}]'" if extra else f"pip install {module}"
    return f"{what} needs the {module} package, which is not installed: {command}"


def check_available(module: str, extra: str, what: str) -> None:
    """Raise ``ValueError`` (a recipe validation error) unless ``module`` can be imported; it is not imported."""
    if module in sys.modules:  # imported already, or blocked (None)
        found = sys.modules[module] is not None
    else:
        found = importlib.util.find_spec(module) is not None
    if not found:
        raise ValueError(missing_message(module, extra, what))


def require(module: str, extra: str, what: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(missing_message(module, extra, what)) from None
