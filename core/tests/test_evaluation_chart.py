"""chart.png: every mode's marker is drawn whole, a mode that scored 0 included."""

from __future__ import annotations

import pytest
from heta_framework.evaluation import chart
from heta_framework.evaluation.report import ModeSummary

pytest.importorskip("matplotlib")


def test_a_mode_that_scored_zero_is_drawn_whole_inside_the_axes(tmp_path, monkeypatch):
    summaries = [
        ModeSummary(recipe="starter", mode="vector_search", queries=10, metrics={"ndcg@10": 0.8}, p50_ms=9.0, p95_ms=12.0),
        ModeSummary(recipe="starter", mode="sql_text_search", queries=10, metrics={"ndcg@10": 0.0}, p50_ms=3.0, p95_ms=4.0),
    ]
    drawn = []
    pyplot = chart._pyplot()
    monkeypatch.setattr(pyplot, "close", drawn.append)  # keep the figure to measure it
    assert chart.draw_chart(summaries, tmp_path / "chart.png") == tmp_path / "chart.png"
    [figure] = drawn
    [axes] = figure.axes
    frame = axes.get_window_extent()
    radius = 5 * figure.dpi / 72  # the markers' size (s=60) is about 8 points across
    for summary in summaries:
        x, y = axes.transData.transform((summary.p50_ms, summary.metrics["ndcg@10"]))
        assert frame.y0 <= y - radius and y + radius <= frame.y1, summary.mode
    bottom, top = chart.y_limits([0.0, 0.8])
    assert bottom < 0 < 0.8 < top <= 1.05
