"""A tool the loop offers: its schema for the model and the coroutine that runs it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs
from heta_framework.common.models import ToolSpec
from heta_framework.kb.search import QueryResult


class ToolError(Exception):
    """A call the tool refuses with a reason the model may read (a missing document, a mode it cannot use); the
    message goes back to the model as the tool's result and into the trace, never a secret or a hidden document."""


def _results(items: Iterable[QueryResult]) -> tuple[QueryResult, ...]:
    return tuple(items)


@attrs.frozen
class ToolOutput:
    """What one call returned: results (evidence, in the ledger) and, for tools that are not searches (the wiki index),
    text the model reads that is not itself citable."""

    results: tuple[QueryResult, ...] = attrs.field(default=(), converter=_results)
    note: str = ""


@attrs.frozen
class Tool:
    spec: ToolSpec
    run: Callable[[Mapping[str, Any]], Awaitable[ToolOutput]]

    @property
    def name(self) -> str:
        return self.spec.name


def object_schema(properties: Mapping[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "properties": dict(properties), "required": list(required), "additionalProperties": False}


def check_arguments(spec: ToolSpec, arguments: Any) -> str | None:
    """Why ``arguments`` do not fit the tool's schema (an object, required keys, the declared simple types, enums),
    or ``None``. A small check of what our own schemas use, not a JSON Schema validator."""
    if not isinstance(arguments, dict):
        return "the arguments are not a JSON object"
    properties = spec.parameters.get("properties", {})
    missing = [k for k in spec.parameters.get("required", ()) if k not in arguments]
    if missing:
        return f"missing argument(s): {', '.join(missing)}"
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        return f"unknown argument(s): {', '.join(unknown)}"
    for key, value in arguments.items():
        declared = properties[key]
        kind = declared.get("type")
        if kind == "string" and not isinstance(value, str):
            return f"{key} must be a string"
        if kind == "integer" and (isinstance(value, bool) or not isinstance(value, int)):
            return f"{key} must be an integer"
        if "enum" in declared and value not in declared["enum"]:
            return f"{key} must be one of {', '.join(map(str, declared['enum']))}"
        if kind == "string" and not value.strip():
            return f"{key} is empty"
    return None
