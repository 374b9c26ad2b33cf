"""Progress a long step reports: the CLI shows a bar, a library shows nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class ProgressHandle(Protocol):
    def advance(self, amount: int = 1) -> None: ...

    def close(self) -> None: ...


class _NoProgress:
    def advance(self, amount: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


#: ``progress(description, total) -> ProgressHandle``; the CLI shows a bar, libraries show nothing.
ProgressFactory = Callable[[str, int | None], ProgressHandle]


def no_progress(description: str, total: int | None) -> ProgressHandle:
    return _NoProgress()
