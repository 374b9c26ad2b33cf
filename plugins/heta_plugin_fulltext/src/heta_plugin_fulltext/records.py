"""How a chunk is stored beside its index terms: JSON (never pickle), plus exact-match filter terms."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from heta_framework.kb.documents import Chunk

_SCALARS = (str, int, float, bool)


def chunk_record(chunk: Chunk) -> str:
    """Everything but the id and text, as a JSON string."""
    return json.dumps(
        {
            "document_id": chunk.document_id,
            "index": chunk.index,
            "start": chunk.start,
            "end": chunk.end,
            "source": chunk.source,
            "page": chunk.page,
            "metadata": dict(chunk.metadata),
        },
        ensure_ascii=False,
    )


def chunk_from_record(chunk_id: str, text: str, record: str) -> Chunk:
    return Chunk(id=chunk_id, text=text, **json.loads(record))


def filter_term(key: str, value: Any) -> str:
    """One exact ``key = value`` fact as a single token, typed: the number ``2`` is not the string ``"2"``.

    Cheap on purpose (every provenance key of every chunk becomes one): a type
    tag and the value, after the key and a unit separator.
    """
    if isinstance(value, bool):
        tagged = f"b{value:d}"
    elif isinstance(value, int):
        tagged = f"n{value}"
    elif isinstance(value, float):
        # 2.0 and 2 are the same number, as in JSON and SQL
        tagged = f"n{int(value)}" if value.is_integer() else f"n{value!r}"
    elif value is None:
        tagged = "z"
    else:
        tagged = f"s{value}"
    return f"{key}{FIELD_SEPARATOR}{tagged}"


#: between a filter term's key and value; json-dumped text and real metadata keys do not contain it
FIELD_SEPARATOR = "\x1f"
#: between the filter terms of one chunk, for backends that take them as one string (Whoosh)
TERM_SEPARATOR = "\x1e"


def filter_terms(chunk: Chunk) -> Iterator[str]:
    """The filter terms of every provenance key of ``chunk``; list values give one term per element."""
    for key, value in chunk.provenance().items():
        if isinstance(value, (list, tuple)):
            for item in value:
                if item is None or isinstance(item, _SCALARS):
                    yield filter_term(key, item)
        elif value is None or isinstance(value, _SCALARS):
            yield filter_term(key, value)


def filter_groups(filters: Mapping[str, Any] | None) -> list[Collection[str]]:
    """One collection of alternative terms per filter key (all keys must match; any value of a list).

    A set value (a caller's readable documents: one frozenset per access scope, thousands of ids) gives
    the same frozenset of terms every time, made once: a store keys what it selects by it at no cost.
    """
    groups: list[Collection[str]] = []
    for key, value in (filters or {}).items():
        if isinstance(value, frozenset):
            groups.append(_term_set(str(key), value))
            continue
        values = list(value) if isinstance(value, (list, tuple, set)) else [value]
        groups.append([filter_term(str(key), item) for item in values])
    return groups


#: (key, a filter's frozenset) -> its terms; a frozenset keeps its hash, so a scope's set is found by identity
_TERM_SETS: OrderedDict[tuple[str, frozenset[Any]], frozenset[str]] = OrderedDict()
_TERM_SETS_KEPT = 16
_TERM_SETS_LOCK = threading.Lock()


def _term_set(key: str, values: frozenset[Any]) -> frozenset[str]:
    with _TERM_SETS_LOCK:
        terms = _TERM_SETS.get((key, values))
        if terms is not None:
            _TERM_SETS.move_to_end((key, values))
            return terms
    terms = frozenset(filter_term(key, item) for item in values)
    with _TERM_SETS_LOCK:
        _TERM_SETS[(key, values)] = terms
        while len(_TERM_SETS) > _TERM_SETS_KEPT:
            _TERM_SETS.popitem(last=False)
    return terms
