"""A rich progress bar behind the runner's ``ProgressFactory`` protocol."""

from __future__ import annotations

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class RichProgress:
    def __init__(self, progress: Progress):
        self._progress = progress

    def __call__(self, description: str, total: int | None) -> _Task:
        return _Task(self._progress, self._progress.add_task(description, total=total))


class _Task:
    def __init__(self, progress: Progress, task_id: int):
        self._progress = progress
        self._task_id = task_id

    def advance(self, amount: int = 1) -> None:
        self._progress.advance(self._task_id, amount)

    def close(self) -> None:
        self._progress.update(self._task_id, visible=True)


def make_progress() -> Progress:
    return Progress(TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=False)
