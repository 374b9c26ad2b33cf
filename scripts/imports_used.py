"""The top-level modules a distribution's code imports without a fallback, read from its source.

``make isolation`` checks that each of them can be found in the distribution's own
venv, so a dependency its code needs but its ``pyproject.toml`` does not declare
is caught even where no test runs that line (an import inside a function of a
code path only the slow tests reach).

An import that has a fallback is left out: one inside ``try`` whose handler
catches ``ImportError`` (an optional extra, reported by the code itself), or under
``if TYPE_CHECKING:``. So are relative imports and the distribution's own modules
(its packages, and the helper modules beside its tests).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

#: exception names whose handler makes the imports in its ``try`` optional
FALLBACK_HANDLERS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def imports_used(folder: Path) -> set[str]:
    """Top-level module names imported without a fallback by the ``.py`` files under ``folder/src`` and ``folder/tests``."""
    found: set[str] = set()
    local: set[str] = set()
    for part in ("src", "tests"):
        root = folder / part
        if not root.is_dir():
            continue
        for path in root.rglob("*.py"):
            local.add(path.relative_to(root).parts[0].removesuffix(".py"))
            found |= set(_required(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))))
    return found - local


def _required(tree: ast.AST) -> Iterator[str]:
    """Module names of the import statements in ``tree`` that are not guarded."""
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import):
            yield from (alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                yield node.module.split(".")[0]
        elif isinstance(node, ast.Try) and _has_fallback(node):
            pending.extend([*node.handlers, *node.orelse, *node.finalbody])  # only the try body is optional
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
        else:
            pending.extend(ast.iter_child_nodes(node))


def _has_fallback(node: ast.Try) -> bool:
    for handler in node.handlers:
        if handler.type is None:
            return True
        caught = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(c, ast.Name) and c.id in FALLBACK_HANDLERS for c in caught):
            return True
    return False


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )
