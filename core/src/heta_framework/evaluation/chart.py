"""The picture of an evaluation: quality against latency, one point per mode and recipe.

matplotlib is an optional dependency (``pip install 'heta-core[eval]'``): the rest of
the evaluation runs without it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from heta_framework.errors import EvaluationError
from heta_framework.evaluation.report import ModeSummary, headline_metric

CHART_FILE = "chart.png"
INSTALL_HINT = "pip install 'heta-core[eval]'"


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise EvaluationError(f"Drawing the chart needs matplotlib: {INSTALL_HINT} (or pass --no-chart).") from None
    matplotlib.use("Agg")  # files only: no display, no GUI toolkit
    import matplotlib.pyplot as pyplot

    return pyplot


def draw_chart(summaries: Sequence[ModeSummary], path: Path, *, title: str = "") -> Path | None:
    """Write a PNG: x is p50 latency (log scale), y the headline quality metric. ``None`` when there is nothing to plot."""
    metric = headline_metric(summaries)
    points = [s for s in summaries if metric and s.metrics.get(metric) is not None and s.p50_ms]
    if not points:
        return None
    pyplot = _pyplot()
    figure, axes = pyplot.subplots(figsize=(8, 5.5), dpi=120)
    recipes = list(dict.fromkeys(s.recipe for s in points))
    markers = "osD^vP*X"
    placed: list[tuple[float, float]] = []
    for number, recipe in enumerate(recipes):
        mine = [s for s in points if s.recipe == recipe]
        axes.scatter([s.p50_ms for s in mine], [s.metrics[metric] for s in mine], s=60, marker=markers[number % len(markers)],
                     label=recipe, zorder=3)
        for s in mine:
            # neighbours (same quality, similar latency) stack their labels downwards instead of over each other
            x, y = math.log10(s.p50_ms), s.metrics[metric]
            crowd = sum(1 for px, py in placed if abs(px - x) < 0.35 and abs(py - y) < 0.04)
            placed.append((x, y))
            axes.annotate(s.mode, (s.p50_ms, y), textcoords="offset points", xytext=(8, 5 - 13 * crowd), fontsize=8,
                          arrowprops={"arrowstyle": "-", "color": "grey", "lw": 0.6} if crowd else None)
    axes.set_xscale("log")
    axes.set_xlabel("p50 latency per query (ms, log scale)")
    axes.set_ylabel(metric)
    axes.set_ylim(0, min(1.05, max(s.metrics[metric] for s in points) * 1.15 + 0.05))
    axes.grid(True, which="both", alpha=0.3)
    axes.set_title(title or f"{metric} against latency: up and to the left is better")
    axes.legend(title="recipe", fontsize=8, loc="lower right")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    pyplot.close(figure)
    return path
