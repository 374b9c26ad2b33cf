"""The picture of an evaluation: quality against latency, one point per mode and recipe.

matplotlib is an optional dependency (``pip install 'heta-core[eval]'``): the rest of
the evaluation runs without it.
"""

from __future__ import annotations

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
    from matplotlib import pyplot

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
    for number, recipe in enumerate(recipes):
        mine = [s for s in points if s.recipe == recipe]
        axes.scatter([s.p50_ms for s in mine], [s.metrics[metric] for s in mine], s=60, marker=markers[number % len(markers)],
                     label=recipe, zorder=3)
    axes.set_xscale("log")
    axes.set_xlabel("p50 latency per query (ms, log scale)")
    axes.set_ylabel(metric)
    axes.set_ylim(*y_limits([s.metrics[metric] for s in points]))
    axes.grid(True, which="both", alpha=0.3)
    axes.set_title(title or f"{metric} against latency: up and to the left is better")
    axes.legend(title="recipe", fontsize=8, loc="lower right")
    _label_points(figure, axes, points, metric, len(recipes) > 1)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, format="png")
    pyplot.close(figure)
    return path


def y_limits(values: Sequence[float]) -> tuple[float, float]:
    """The quality axis: from a little below 0, so a mode that scored 0 is drawn whole (its marker centred on the
    line, not cut in half by the axis), to a little above the best score."""
    top = min(1.05, max(values) * 1.15 + 0.05)
    return -0.04 * top, top


#: where a label may sit, in points from its marker: beside it first, then further out above and below
_LABEL_OFFSETS = [(8, 4), (-8, 4), (8, -12), (-8, -12), (8, 18), (-8, 18), (8, -26), (-8, -26), (8, 32), (-8, 32), (8, -40), (-8, -40)]


def _label_points(figure, axes, points: Sequence[ModeSummary], metric: str, with_recipe: bool) -> None:
    """Name every point with its mode, moving a label to the first free place so that none covers another."""
    figure.canvas.draw()  # the axes' final limits and scale: label boxes are measured in pixels
    renderer = figure.canvas.get_renderer()
    from matplotlib.transforms import Bbox

    radius = 5 * figure.dpi / 72  # a marker of size 60 is about 8 points across
    centres = axes.transData.transform([(s.p50_ms, s.metrics[metric]) for s in points])
    taken = [Bbox.from_extents(x - radius, y - radius, x + radius, y + radius) for x, y in centres]  # labels keep off the markers too
    for s in sorted(points, key=lambda s: (-s.metrics[metric], s.p50_ms)):
        text = f"{s.mode} ({s.recipe})" if with_recipe else s.mode
        for number, (dx, dy) in enumerate(_LABEL_OFFSETS):
            label = axes.annotate(text, (s.p50_ms, s.metrics[metric]), textcoords="offset points", xytext=(dx, dy),
                                  ha="left" if dx > 0 else "right", fontsize=8,
                                  arrowprops={"arrowstyle": "-", "color": "grey", "lw": 0.6} if number > 1 else None)
            box = label.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in taken) or number == len(_LABEL_OFFSETS) - 1:
                taken.append(box)
                break
            label.remove()
