"""Checks on a query's text, ``top_k`` and filters, made once when a ``QueryRequest`` is built.

Every mode then sees the same clean input, so hostile input gets the same
``InvalidQueryError`` in every mode instead of whatever each library raises
(a lone surrogate cannot be encoded to UTF-8 for an embedding model or SQLite;
a NUL in a filter key breaks SQLite's JSON paths; a dict as a filter value has
no meaning in any store).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from heta_framework.common.validators import MAX_RESULTS, is_number, is_whole_number
from heta_framework.contracts.access import VisibleDocuments
from heta_framework.errors import InvalidQueryError


def check_text(field: str, value: Any) -> None:
    """``value`` is a ``str`` that encodes to UTF-8 (no lone surrogate) and holds no NUL."""
    if not isinstance(value, str):
        raise InvalidQueryError(f"{field} must be text, got {type(value).__name__} {value!r}.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        char = value[exc.start]
        raise InvalidQueryError(
            f"{field} contains a lone surrogate (U+{ord(char):04X}) at position {exc.start}, which is not valid "
            "Unicode text. Decode the input with errors='replace' (or remove the character) before querying."
        ) from None
    if "\x00" in value:
        raise InvalidQueryError(f"{field} contains a NUL character (\\x00) at position {value.index(chr(0))}; remove it.")


def check_top_k(top_k: Any) -> None:
    if not is_whole_number(top_k) or not 1 <= top_k <= MAX_RESULTS:
        shown = top_k if not is_whole_number(top_k) or top_k.bit_length() < 64 else f"a {top_k.bit_length()}-bit number"
        raise InvalidQueryError(f"top_k must be a whole number from 1 to {MAX_RESULTS}, got {shown!r}.")


def check_filters(filters: Mapping[str, Any]) -> None:
    """Keys are non-empty text; a value is text, a number or a boolean, or a list of those ("any of")."""
    for key, value in filters.items():
        if not isinstance(key, str) or not key:
            raise InvalidQueryError(f"Filter keys must be non-empty text (a metadata field name), got {key!r}.")
        check_text(f"filter key {key!r}", key)
        if isinstance(value, VisibleDocuments):  # an access scope's ids: each came from the catalog, checked then
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            for item in value:
                _check_filter_scalar(key, item, listed=True)
        else:
            _check_filter_scalar(key, value, listed=False)


def matches_filters(metadata: Mapping[str, Any], filters: Mapping[str, Any]) -> bool:
    """Whether ``metadata`` passes ``filters`` (every key equal; a list value matches any of its items).

    The in-Python form of what every store does in its own query language, for an
    engine that filters results it assembled itself (graph evidence, report chunks).
    """
    for key, wanted in filters.items():
        value = metadata.get(key)
        if isinstance(wanted, (set, frozenset)):  # an access scope's thousands of ids: a lookup, never a copy per row
            try:
                if value not in wanted:
                    return False
            except TypeError:  # an unhashable value (a list in metadata) is in no set of scalars
                return False
        elif value not in (wanted if isinstance(wanted, (list, tuple)) else (wanted,)):
            return False
    return True


def _check_filter_scalar(key: str, value: Any, *, listed: bool) -> None:
    where = f"filter {key!r}" + (" (in its list)" if listed else "")
    if isinstance(value, str):
        check_text(where, value)
        return
    if isinstance(value, bool) or is_whole_number(value):
        return
    if isinstance(value, float) and is_number(value):
        return
    raise InvalidQueryError(
        f"{where} has a value of type {type(value).__name__} ({value!r}); a filter value must be text, a number or "
        f"a boolean, or a list of them to match any, e.g. filters={{{key!r}: ['a', 'b']}}."
    )
