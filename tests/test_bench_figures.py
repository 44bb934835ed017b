"""The benchmark report's figures (``scripts/bench_report.py``), drawn from the
committed results of one suite run: log axes where the sizes span decades, the
decades labelled as plain numbers, axes named with their units, every benchmark
with a rate drawn once, legends and values clear of the data and of the edges."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "docs" / "benchmarks" / "results.json"


@pytest.fixture(scope="module")
def drawn():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    if not RESULTS.exists():
        pytest.skip("no committed benchmark results")
    spec = importlib.util.spec_from_file_location("bench_report",
                                                  REPO / "scripts" / "bench_report.py")
    report = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_report", report)  # its dataclasses look themselves up
    spec.loader.exec_module(report)
    _, entries = report.load(str(RESULTS))
    figs = dict(report.figures(entries))
    yield report, entries, figs
    import matplotlib.pyplot as plt
    for fig in figs.values():
        plt.close(fig)


def _inside(inner, outer, slack=1.0) -> bool:
    return (inner.x0 >= outer.x0 - slack and inner.x1 <= outer.x1 + slack
            and inner.y0 >= outer.y0 - slack and inner.y1 <= outer.y1 + slack)


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def _labels(axis):
    lo, hi = sorted(axis.get_view_interval())
    return [(t.get_position(), t.get_text()) for t in axis.get_ticklabels()
            if t.get_text() and lo <= (t.get_position()[0] if axis.axis_name == "x"
                                       else t.get_position()[1]) <= hi]


def test_sweeps_on_log_axes_with_units(drawn):
    report, entries, figs = drawn
    for group, name, *_ in report.SWEEP_PLOTS:
        items = [e for e in report.in_group(entries, group) if e.rate]
        assert items and name in figs, group
        fig = figs[name]
        ax = fig.axes[0]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        assert ax.get_xscale() == ax.get_yscale() == "log"
        assert "(log scale)" in ax.get_xlabel() and "(log scale)" in ax.get_ylabel()
        assert any(unit in ax.get_ylabel() for unit in ("per second", "per row"))
        # the counted sizes (queries, rows, k) sit on whole-number decades, labelled
        # as plain numbers (no 10^x), at least two of them
        ticks = _labels(ax.xaxis)
        assert len(ticks) >= 2, ticks
        for (x, _), text in ticks:
            assert float(x).is_integer() and "^" not in text and "e" not in text, text
        # one line a system, every point of the group drawn
        assert sum(len(line.get_xdata()) for line in ax.get_lines()) == len(items)
        legend = ax.get_legend().get_window_extent(renderer)
        assert not _overlap(legend, ax.get_window_extent(renderer)), "legend on the data"
        assert _inside(legend, fig.bbox)
        for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
            assert _inside(text.get_window_extent(renderer), fig.bbox), text.get_text()


def test_shapes_one_bar_a_benchmark_with_its_value(drawn):
    report, entries, figs = drawn
    fig = figs["shapes.png"]
    ax = fig.axes[0]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    want = [e for g in report.SHAPE_GROUPS for e in report.in_group(entries, g) if e.rate]
    assert len(ax.patches) == len(want)
    assert sorted(p.get_width() for p in ax.patches) == pytest.approx(
        sorted(e.rate for e in want))
    assert len({p.get_y() for p in ax.patches}) == len(want), "two bars on one row"
    assert ax.get_xscale() == "log" and "per second" in ax.get_xlabel()
    box = ax.get_window_extent(renderer)
    values = [t for t in ax.texts if t.get_text()]
    assert len(values) == len(want)
    for t in values:  # each value printed inside the plot, right of its bar
        assert _inside(t.get_window_extent(renderer), box), t.get_text()
    legend = ax.get_legend().get_window_extent(renderer)
    assert not _overlap(legend, box) and _inside(legend, fig.bbox)
    heads = [t.get_text() for t in ax.get_yticklabels(minor=True)]
    assert heads == [g for g in report.SHAPE_GROUPS
                     if any(e.rate for e in report.in_group(entries, g))]
