"""Filters as Milvus boolean expressions that never contain a user's text.

Splicing values into an expression is where quoting bugs live (hostile keys and
values, JSON paths, escapes that Milvus Lite and a server parse differently). So
nothing the user wrote reaches an expression: each record stores the SHA-256
digests of its ``(key, value)`` metadata pairs in an array field, and its primary
key is the digest of its id. A filter ``{key: value}`` becomes
``ARRAY_CONTAINS(filter_tokens, "<hex>")``, a list ``ARRAY_CONTAINS_ANY(...)``,
and ``id`` a ``pk in [...]``: hexadecimal literals only.

Same semantics as the FAISS store: every key must match, a list value means any
of them, values keep their JSON types (``1`` is not ``"1"``, ``true`` is not
``1``; ``1.0`` is ``1`` as in JSON and Python), and a metadata value that is
itself a list or an object matches no scalar filter.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

TOKEN_FIELD = "filter_tokens"
PRIMARY_FIELD = "pk"
ID_KEY = "id"


def _digest(text: str) -> str:
    # 128 bits: a collision between two keys of one knowledge base is not a practical concern
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def primary_key(record_id: str) -> str:
    return _digest(json.dumps(["id", str(record_id)]))


def _canonical(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bool, int, float))


def token(key: str, value: Any) -> str:
    return _digest(json.dumps([str(key), _canonical(value)]))


def metadata_tokens(metadata: Mapping[str, Any]) -> list[str]:
    """The tokens a record is found by: one per metadata key whose value is a scalar."""
    return sorted({token(key, value) for key, value in metadata.items() if _is_scalar(value)})


def _allowed(wanted: Any) -> list[Any]:
    return list(wanted) if isinstance(wanted, (list, tuple, set, frozenset)) else [wanted]


def _hex_list(items: Iterable[str]) -> str:
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


def filter_expression(filters: Mapping[str, Any] | None) -> str | None:
    """The expression for ``filters``: ``""`` matches everything, ``None`` means nothing can match."""
    clauses: list[str] = []
    for key, wanted in (filters or {}).items():
        allowed = _allowed(wanted)
        if not allowed:
            return None
        if key == ID_KEY:
            clauses.append(f"{PRIMARY_FIELD} in {_hex_list(primary_key(str(v)) for v in allowed)}")
            continue
        tokens = sorted({token(key, value) for value in allowed if _is_scalar(value)})
        if not tokens:
            return None
        if len(tokens) == 1:
            clauses.append(f'ARRAY_CONTAINS({TOKEN_FIELD}, "{tokens[0]}")')
        else:
            clauses.append(f"ARRAY_CONTAINS_ANY({TOKEN_FIELD}, {_hex_list(tokens)})")
    return " and ".join(f"({c})" for c in clauses)


def ids_expression(primary_keys: Iterable[str]) -> str:
    return f"{PRIMARY_FIELD} in {_hex_list(primary_keys)}"
