"""Chunk and vector filters as SQL ``WHERE`` terms, with the same semantics as the embedded stores.

A filter value that is a list (tuple, set) matches any of its items; an empty
list matches nothing. Keys that are real columns of the table are compared as
text; every other key is a metadata key, compared as JSON so ``1``, ``"1"`` and
``true`` stay distinct. Keys and values are always parameters, never SQL.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from psycopg import sql


def filter_clause(filters: Mapping[str, Any] | None, columns: Collection[str]) -> tuple[sql.Composable, list[Any]] | None:
    """``WHERE`` terms for ``filters`` over a table whose text ``columns`` are filterable by name.

    ``None``: a filter that can match nothing (an empty list).
    """
    terms: list[sql.Composable] = []
    params: list[Any] = []
    for key, value in (filters or {}).items():
        values = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
        if not values:
            return None
        if key in columns:
            terms.append(sql.SQL("{} = ANY(%s)").format(sql.Identifier(key)))
            params.append([str(v) for v in values])
        else:
            terms.append(sql.SQL("(metadata -> %s) = ANY(%s::jsonb[])"))
            params.extend([str(key), [json.dumps(v) for v in values]])
    return (sql.SQL(" AND ").join(terms) if terms else sql.SQL("TRUE")), params
