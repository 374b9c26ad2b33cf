"""Optional libraries behind extras: jieba (``[chinese]``) and tantivy (``[tantivy]``).

Whoosh in English needs neither, so neither is a hard dependency; a recipe that needs
one gets an error naming the extra to install, when the recipe is validated.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType

DISTRIBUTION = "heta-plugin-fulltext"


def missing_message(module: str, extra: str, what: str) -> str:
    return f"{what} needs the {module} package, which is not installed: pip install '{DISTRIBUTION}[{extra}]'"


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
