"""What the tools returned (the only evidence an answer may cite) and what the loop did (the trace)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs
from heta_framework.kb.search import QueryResult


class Ledger:
    """Every result a tool returned, once, in the order first seen. An id the model names that is not here was never
    shown to it, whatever it claims: the synthesis's citations are checked against this and nothing else."""

    def __init__(self) -> None:
        self._results: dict[str, QueryResult] = {}

    def add(self, results: Iterable[QueryResult]) -> list[str]:
        ids = []
        for result in results:
            self._results.setdefault(result.id, result)
            ids.append(result.id)
        return ids

    def __contains__(self, result_id: object) -> bool:
        return result_id in self._results

    def __len__(self) -> int:
        return len(self._results)

    def get(self, result_id: str) -> QueryResult:
        return self._results[result_id]

    def results(self) -> list[QueryResult]:
        return list(self._results.values())


@attrs.frozen
class TraceEntry:
    """One tool call as it ran (or was refused): what was asked, what came back, how long it took."""

    step: int
    tool: str
    arguments: Any
    result_ids: tuple[str, ...] = ()
    duration_ms: float = 0.0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = {"step": self.step, "tool": self.tool, "arguments": self.arguments, "result_ids": list(self.result_ids),
                "duration_ms": round(self.duration_ms, 3)}
        if self.error is not None:
            data["error"] = self.error
        return data
