"""Reading and checking the options of the composed modes (``candidate_top_k``, ``rrf_k``, ...).

A bad option value is the caller's mistake, not a recoverable problem, so it
raises ``ValueError`` naming the option and what it accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from numbers import Real
from typing import Any

from heta_framework.builtin.engines.fusion import DEFAULT_RRF_K
from heta_framework.kb.search import QueryRequest

MAX_DEFAULT_CANDIDATES = 50

#: options a composed mode hands down to the composed mode it calls (never ``answer``:
#: only the outermost mode answers)
FORWARDED_OPTIONS = ("candidate_top_k", "rrf_k", "hybrid_weights")


def candidate_top_k(request: QueryRequest) -> int:
    """Candidates recalled from each base mode: ``options["candidate_top_k"]``, default ``min(top_k * 3, 50)``."""
    value = request.options.get("candidate_top_k")
    if value is None:
        return min(request.top_k * 3, MAX_DEFAULT_CANDIDATES)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"options.candidate_top_k must be a whole number of at least 1, got {value!r}")
    return value


def rrf_k(request: QueryRequest) -> float:
    """The RRF smoothing constant: ``options["rrf_k"]``, default 60."""
    value = request.options.get("rrf_k", DEFAULT_RRF_K)
    if isinstance(value, bool) or not isinstance(value, Real) or value < 0:
        raise ValueError(f"options.rrf_k must be a number of at least 0, got {value!r}")
    return float(value)


def mode_weights(request: QueryRequest, option: str, defaults: Mapping[str, float]) -> dict[str, float]:
    """Per-mode fusion weights from ``options[option]``; modes left out keep their default."""
    given = request.options.get(option)
    if given is None:
        return dict(defaults)
    if not isinstance(given, Mapping):
        raise ValueError(f"options.{option} must map mode names to weights, e.g. {dict(defaults)!r}; got {given!r}")
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ValueError(f"options.{option} has unknown mode(s) {', '.join(map(repr, unknown))}; known: {', '.join(defaults)}")
    weights = dict(defaults)
    for mode, weight in given.items():
        if isinstance(weight, bool) or not isinstance(weight, Real) or weight < 0:
            raise ValueError(f"options.{option}[{mode!r}] must be a number of at least 0, got {weight!r}")
        weights[mode] = float(weight)
    return weights


def positive_int(request: QueryRequest, option: str, default: int) -> int:
    value = request.options.get(option, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"options.{option} must be a whole number of at least 1, got {value!r}")
    return value


def forwarded_options(request: QueryRequest, *, candidates: int | None = None) -> dict[str, Any]:
    """The fusion options to hand to a composed base mode; ``candidates`` pins ``candidate_top_k``."""
    options = {name: request.options[name] for name in FORWARDED_OPTIONS if name in request.options}
    if candidates is not None:
        options["candidate_top_k"] = candidates
    return options
