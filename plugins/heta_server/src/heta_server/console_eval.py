"""The latest ``heta eval`` results of a knowledge base, for the console's evaluation view.

``heta eval`` writes ``summary.json`` and ``chart.png`` into its ``--out`` folder (``heta-eval`` in the
folder it ran from, by default). The server looks where those land for this knowledge base, newest first:

- ``heta-eval/`` beside the knowledge-base folder (``heta --kb kb eval ...`` run from the folder holding ``kb``),
  and inside it;
- the folder holding the knowledge base when that is an evaluation's own ``kb-<recipe>`` folder
  (``heta eval --recipe``).

A summary counts only when one of its rows is this knowledge base (the recipe ``heta eval`` named it by:
its folder's name, or ``<recipe>`` for ``kb-<recipe>``). What is returned leaves out the summary's
``files`` (the server's absolute paths); the chart goes with it as a picture.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SUMMARY_FILE = "summary.json"
CHART_FILE = "chart.png"
DEFAULT_OUT = "heta-eval"
KB_PREFIX = "kb-"


def _candidates(kb_path: Path) -> list[Path]:
    folders = [kb_path.parent / DEFAULT_OUT, kb_path / DEFAULT_OUT]
    if kb_path.name.startswith(KB_PREFIX):
        folders.append(kb_path.parent)
    return folders


def _names(kb_path: Path) -> set[str]:
    names = {kb_path.name}
    if kb_path.name.startswith(KB_PREFIX):
        names.add(kb_path.name[len(KB_PREFIX):])
    return names


def latest_eval_folder(kb_path: Path) -> Path | None:
    """The folder of the newest summary about this knowledge base, or ``None``."""
    names = _names(kb_path)
    found = []
    for folder in _candidates(kb_path):
        summary = folder / SUMMARY_FILE
        try:
            report = json.loads(summary.read_text(encoding="utf-8"))
            modified = summary.stat().st_mtime
        except (OSError, ValueError):
            continue
        if isinstance(report, dict) and any(isinstance(row, dict) and row.get("recipe") in names for row in report.get("results", [])):
            found.append((modified, folder))
    return max(found)[1] if found else None


def eval_report(kb_path: Path) -> dict[str, Any] | None:
    """The newest summary about this knowledge base, its rows narrowed to it, with ``finished`` (the file's
    time); ``None`` when there is none."""
    folder = latest_eval_folder(kb_path)
    if folder is None:
        return None
    summary = folder / SUMMARY_FILE
    report = json.loads(summary.read_text(encoding="utf-8"))
    names = _names(kb_path)
    return {
        "dataset": report.get("dataset"), "k": report.get("k"),
        "results": [row for row in report.get("results", []) if isinstance(row, dict) and row.get("recipe") in names],
        "skipped": {recipe: reasons for recipe, reasons in (report.get("skipped") or {}).items() if recipe in names},
        "finished": summary.stat().st_mtime,
    }


def eval_chart(kb_path: Path) -> bytes | None:
    folder = latest_eval_folder(kb_path)
    chart = folder / CHART_FILE if folder is not None else None
    return chart.read_bytes() if chart is not None and chart.is_file() else None
