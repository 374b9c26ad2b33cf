"""Typed query options: each engine declares an attrs class, and a request's options are checked against it.

An engine sets ``options_type`` (an attrs class whose fields are its option
names, defaults and validators from ``heta_framework.common.validators``) and
reads ``query_options(self, request)`` instead of ``request.options.get(...)``.
An engine without ``options_type`` takes no options of its own.

The knowledge base checks every request against its engine before the engine
runs, so an unknown option is an error with a did-you-mean (as in recipes),
never silently ignored, and a bad value is the same ``InvalidQueryError`` in
every mode. ``answer`` is common to all modes: the knowledge base handles it.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, TypeVar

import attrs

from heta_framework.common.validators import OptionValueError, boolean
from heta_framework.errors import InvalidQueryError

T = TypeVar("T")


@attrs.frozen
class NoOptions:
    """The options of a mode that has none of its own."""


@attrs.frozen
class CommonQueryOptions:
    """Options every mode accepts; the knowledge base (not the engine) acts on them."""

    #: write a grounded answer with citations from the results (needs models.language)
    answer: bool = attrs.field(default=False, validator=boolean)


COMMON_OPTIONS = frozenset(field.name for field in attrs.fields(CommonQueryOptions))


def options_type_of(engine: Any) -> type:
    return getattr(engine, "options_type", None) or NoOptions


def option_names(options_type: type) -> list[str]:
    return [field.name for field in attrs.fields(options_type) if field.init]


def parse_options(options_type: type[T], options: Mapping[str, Any], *, mode: str) -> T:
    """``options`` (minus the common ones) as an ``options_type``; ``InvalidQueryError`` says what is wrong."""
    own = {key: value for key, value in options.items() if key not in COMMON_OPTIONS}
    names = option_names(options_type)
    unknown = [key for key in own if key not in names]
    if unknown:
        raise InvalidQueryError(_unknown_message(mode, unknown, names))
    try:
        return options_type(**own)
    except OptionValueError as exc:
        raise InvalidQueryError(f"Query mode {mode!r}: options.{exc}.") from None
    except (TypeError, ValueError) as exc:
        raise InvalidQueryError(f"Query mode {mode!r}: invalid options ({exc}).") from None


def query_options(engine: Any, request: Any) -> Any:
    """The engine's typed options for ``request`` (``engine.options_type``)."""
    return parse_options(options_type_of(engine), request.options, mode=request.mode)


def check_options(engine: Any, request: Any) -> None:
    """Raise ``InvalidQueryError`` unless every option of ``request`` is valid for ``engine``."""
    common = {key: value for key, value in request.options.items() if key in COMMON_OPTIONS}
    try:
        CommonQueryOptions(**common)
    except OptionValueError as exc:
        raise InvalidQueryError(f"Query mode {request.mode!r}: options.{exc}.") from None
    query_options(engine, request)


def accepted_options(engine: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """The part of ``options`` that ``engine`` takes: what a composed mode may hand to a base mode."""
    names = set(option_names(options_type_of(engine)))
    return {key: value for key, value in options.items() if key in names}


def _unknown_message(mode: str, unknown: list[str], names: list[str]) -> str:
    if names:
        takes = f"Options of {mode!r}: {', '.join(names)} (and {', '.join(sorted(COMMON_OPTIONS))} in every mode)."
    else:
        takes = f"Query mode {mode!r} takes no options of its own (only {', '.join(sorted(COMMON_OPTIONS))})."
    hints = []
    for key in unknown:
        close = difflib.get_close_matches(str(key), [*names, *COMMON_OPTIONS], n=1)
        hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"Unknown option {', '.join(hints)} for query mode {mode!r}. {takes}"
