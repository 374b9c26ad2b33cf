"""attrs validators shared by recipe step options, store options and query options.

One set of rules everywhere: a boolean is not a number (``True`` would
otherwise pass as 1), a whole-number field refuses ``150.9`` instead of
truncating it, and every message names the field and says what it accepts.
Each failure is an ``OptionValueError`` (a ``ValueError``) that carries the field
name, so the recipe loader can report ``$.steps[2].batch_size`` and a query
``options.rrf_k``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import attrs

Validator = Callable[[Any, "attrs.Attribute[Any]", Any], None]


class OptionValueError(ValueError):
    """A field's value is out of range or of the wrong type. ``field`` names it."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(message)


def is_whole_number(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """An int or float that is not a boolean and not NaN/infinite."""
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(float(value))


def _bounds(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" between {minimum:g} and {maximum:g}"
    if minimum is not None:
        return f" of at least {minimum:g}"
    if maximum is not None:
        return f" of at most {maximum:g}"
    return ""


def _in_bounds(value: float, minimum: float | None, maximum: float | None) -> bool:
    return (minimum is None or value >= minimum) and (maximum is None or value <= maximum)


def whole_number(minimum: int | None = 1, maximum: int | None = None, *, optional: bool = False) -> Validator:
    """An integer (not a bool, not a float) within the bounds; ``None`` passes when ``optional``."""

    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None and optional:
            return
        if not is_whole_number(value) or not _in_bounds(value, minimum, maximum):
            raise OptionValueError(
                attribute.name, f"{attribute.name} must be a whole number{_bounds(minimum, maximum)}, got {value!r}"
            )

    return check


#: the most results one query may ask for (``top_k``) and the bound of every option that sizes a list of
#: results or candidates: past it a request is a mistake or an attack (``top_k = 10**8`` held a server for
#: two minutes), never a retrieval need
MAX_RESULTS = 1000


def result_count(minimum: int = 1, *, optional: bool = False) -> Validator:
    """A count of results or candidates: a whole number from ``minimum`` to ``MAX_RESULTS``."""
    return whole_number(minimum, MAX_RESULTS, optional=optional)


def number(minimum: float | None = None, maximum: float | None = None, *, above: float | None = None, optional: bool = False) -> Validator:
    """A finite int or float (not a bool) within the bounds; ``above`` excludes its bound (``> 0``)."""

    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None and optional:
            return
        ok = is_number(value) and _in_bounds(value, minimum, maximum) and (above is None or value > above)
        if not ok:
            wanted = f" greater than {above:g}" if above is not None else _bounds(minimum, maximum)
            raise OptionValueError(attribute.name, f"{attribute.name} must be a number{wanted}, got {value!r}")

    return check


#: the one positive-whole-number check (batch sizes, chunk sizes, top-k counts, ...)
positive_whole_number = whole_number(1)


def one_of(choices: Collection[str]) -> Validator:
    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value not in choices:
            listed = ", ".join(repr(c) for c in choices)
            raise OptionValueError(attribute.name, f"{attribute.name} must be one of {listed}, got {value!r}")

    return check


def boolean(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
    if not isinstance(value, bool):
        raise OptionValueError(attribute.name, f"{attribute.name} must be true or false, got {value!r}")


def number_vector(optional: bool = True) -> Validator:
    """A non-empty list of finite numbers (a precomputed query vector)."""

    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None and optional:
            return
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise OptionValueError(attribute.name, f"{attribute.name} must be a list of numbers, got {value!r}")
        items = list(value)
        if not items or not all(is_number(item) for item in items):
            raise OptionValueError(attribute.name, f"{attribute.name} must be a non-empty list of finite numbers")

    return check


def weights_for(known: Collection[str]) -> Validator:
    """A mapping from some of ``known`` (mode names) to numbers of at least 0."""

    def check(instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, Mapping):
            example = {name: 1.0 for name in known}
            raise OptionValueError(attribute.name, f"{attribute.name} must map mode names to weights, e.g. {example!r}; got {value!r}")
        unknown = sorted(set(value) - set(known), key=str)
        if unknown:
            raise OptionValueError(
                attribute.name,
                f"{attribute.name} has unknown mode(s) {', '.join(map(repr, unknown))}; known: {', '.join(known)}",
            )
        for mode, weight in value.items():
            if not is_number(weight) or weight < 0:
                raise OptionValueError(attribute.name, f"{attribute.name}[{mode!r}] must be a number of at least 0, got {weight!r}")

    return check
