"""Plots of a :class:`fastndcg.Comparison` (matplotlib, an optional extra).

One figure, read left to right along one row per system (rows in blocks: one
block per measure, or per segment):

* **Mean with its interval**: each system's mean and its percentile bootstrap
  interval, one row each (a forest plot: no two systems drawn at one place);
* **Difference against the baseline**: each system's paired mean difference and
  its bootstrap interval, with a line at zero; on the right, the difference and
  the corrected p-value of the comparison's first test (``*``, a filled marker
  and a thicker line when it is below ``1 - confidence``);
* **Queries won, tied and lost** against the baseline: a count, on an axis of
  whole numbers.

Everything drawn is read from the Comparison's own tables (``systems`` and
``tests``); nothing is recomputed here.
"""

from __future__ import annotations

import os
import textwrap

from .render import CORRECTION_NAMES

_WRAP = 24          # characters a line of a row's label
_MAX_LINES = 2      # lines a label may take (longer names are shortened in the middle)
_WON, _TIED, _LOST = "#2b8c6b", "#c9c9c9", "#c44e52"
_COUNTS = (("wins", "won", _WON), ("ties", "tied", _TIED), ("losses", "lost", _LOST))


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'fastndcg[plot]'") from None
    if not os.environ.get("DISPLAY") and not os.environ.get("MPLBACKEND"):
        matplotlib.use("Agg")  # no display: draw to files only
    import matplotlib.pyplot as plt
    return plt


def _measures(c, measure) -> list[str]:
    """The measures drawn: all of them (with segments: the last one) by default."""
    if measure is None:
        return [c.measures[-1]] if c.segmented else list(c.measures)
    names = [measure] if isinstance(measure, str) else measure
    if not isinstance(names, (list, tuple)) or not names \
            or not all(isinstance(m, str) for m in names):
        raise TypeError(f"measure must name one of the comparison's measures "
                        f"({', '.join(map(repr, c.measures))}), or be a list of them; got "
                        f"{measure!r}")
    for m in names:
        if m not in c.measures:
            raise ValueError(f"measure={m!r} is not one of the comparison's measures "
                             f"{', '.join(map(repr, c.measures))}")
    return list(dict.fromkeys(names))


def _plain(text) -> str:
    """Text shown as written: a ``$`` would start matplotlib's mathematics."""
    return str(text).replace("$", r"\$")


def _label(name: str, wrap: int = _WRAP, max_lines: int = _MAX_LINES) -> str:
    """A row's label: wrapped onto at most two lines, shortened in the middle beyond."""
    text = str(name)
    room = wrap * max_lines
    if len(text) > room:
        half = (room - 1) // 2
        text = text[:half] + "…" + text[-(room - 1 - half):]
    return _plain("\n".join(textwrap.wrap(text, wrap, break_long_words=True,
                                          break_on_hyphens=False)) or text)


def _short(name: str, width: int = 28) -> str:
    """A name inside a title: one line, shortened in the middle."""
    text = str(name)
    if len(text) > width:
        half = (width - 1) // 2
        text = text[:half] + "…" + text[-(width - 1 - half):]
    return _plain(text)


def _pvalue(p) -> str:
    if p is None:
        return "-"
    if p >= 1e-3:
        return f"{p:.3f}"
    return f"{p:.0e}" if p > 0 else "<1e-300"


def _interval(ax, y, mid, lo, hi, color, gid, filled=True, lw=1.8):
    """A point and its interval on row ``y`` (drawn as given: a percentile interval
    need not hold its point). The interval is the LineCollection named ``gid``."""
    ax.hlines(y, lo, hi, colors=color, lw=lw, gid=gid, zorder=3)
    ax.plot([lo, hi], [y, y], "|", color=color, ms=7, mew=lw, zorder=3)
    ax.plot(mid, y, "o", color=color, mfc=color if filled else "white", mew=1.6, ms=6,
            zorder=4)


def plot_comparison(c, path, measure):
    """Draw ``c`` (a Comparison): see the module's docstring. ``measure``: one
    measure or a list of them (default: every measure; with segments, the last).
    Saves to ``path`` when given; returns the Figure."""
    measures = _measures(c, measure)
    plt = _pyplot()
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    alpha = 1 - c.confidence
    pct = f"{c.confidence * 100:g}%"
    test = c.tests_run[0]
    p_col = f"p_{test}_adj" if c.correction != "none" else f"p_{test}"
    sys_rows = c.systems.to_pylist()
    means = {(r["system"], r.get("segment"), r["measure"]): r for r in sys_rows}
    tests = {(r["system"], r["segment"], r["measure"]): r for r in c.tests.to_pylist()}
    segments = (list(dict.fromkeys(r["segment"] for r in sys_rows)) if c.segmented
                else [None])
    order = [c.baseline] + [s for s in c.system_names if s != c.baseline]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color = {name: colors[i % len(colors)] for i, name in enumerate(c.system_names)}

    # the rows, top to bottom: a header for each block when there are several blocks
    blocks = [(seg, m) for seg in segments for m in measures]
    headed = len(blocks) > 1
    labels = {name: _label(name) for name in order}
    if len(set(labels.values())) < len(labels):  # shortened alike: show them whole
        labels = {name: _label(name, max_lines=len(name)) for name in order}
    base = labels[c.baseline]
    labels[c.baseline] = base + ("\n(baseline)" if "\n" in base else " (baseline)")
    lines = max(lab.count("\n") + 1 for lab in labels.values())
    rows, heads = [], []  # (y, ...): row centres, one unit a system
    y = -0.5
    for seg, m in blocks:
        if headed:
            what = m
            if seg is not None:
                n = means[(c.baseline, seg, m)]["n_queries"]
                what = (f"{seg}" if c.segment_name == "segment"  # a mapping: no column name
                        else f"{c.segment_name} = {seg}")
                what += (f", {m}" if len(measures) > 1 else "") + f": {n:,} queries"
            head = _label(what, 34)
            tall = max(1.0, 0.5 + 0.5 * (head.count("\n") + 1) / lines)
            heads.append((y + tall / 2, head, tall))
            y += tall
        for name in order:
            rows.append((y + 0.5, name, seg, m))
            y += 1
    bottom = y  # the last row's lower edge (the first row's upper edge is -0.5)
    row_in = 0.26 + 0.15 * (lines - 1)
    height = max(3.4, 1.75 + (bottom + 0.5) * row_in)
    fig, (ax_m, ax_d, ax_n) = plt.subplots(
        1, 3, figsize=(13, height), sharey=True, layout="constrained",
        gridspec_kw={"width_ratios": [1.0, 1.15, 0.8]})
    ax_m.set_gid("means")
    ax_d.set_gid("differences")
    ax_n.set_gid("counts")

    # 1. each system's mean and interval, one row each
    for y, name, seg, m in rows:
        r = means[(name, seg, m)]
        _interval(ax_m, y, r["mean"], r["ci_low"], r["ci_high"], color[name], "mean-interval")
    ax_m.set_title(f"Mean{' ' + _plain(measures[0]) if len(measures) == 1 else ''} "
                   f"({pct} interval)", fontsize=10.5)
    ax_m.set_xlabel(_plain(measures[0]) if len(measures) == 1 else "mean (the block's measure)")

    # 2. paired differences against the baseline: forest plot, line at zero
    ax_d.axvline(0, color="0.25", lw=1.0, zorder=1, gid="zero")
    right = []  # (y, text, significant)
    for y, name, seg, m in rows:
        if name == c.baseline:
            right.append((y, "baseline", False))
            continue
        t = tests[(name, seg, m)]
        d, lo, hi, p = t["mean_diff"], t["ci_low"], t["ci_high"], t[p_col]
        sig = p is not None and p < alpha
        _interval(ax_d, y, d, lo, hi, color[name],
                  "difference-interval-significant" if sig else "difference-interval",
                  filled=sig, lw=2.4 if sig else 1.4)
        right.append((y, f"{d:+.3f}  p={_pvalue(p)}{' *' if sig else '  '}", sig))
    ax_d.set_title(f"Difference against the baseline ({pct} interval)", fontsize=10.5)
    ax_d.set_xlabel("system - baseline"
                    + (f"  ({_plain(measures[0])})" if len(measures) == 1 else ""))
    lo, hi = ax_d.get_xlim()
    span = max(abs(lo), abs(hi))
    ax_d.set_xlim(min(lo, -0.05 * span), max(hi, 0.05 * span))  # zero never on the edge
    ax_p = ax_d.twinx()  # the differences and p-values, on the right
    ax_p.set_gid("p-values")
    ax_p.set_ylim(bottom, -0.5)
    ax_p.set_yticks([r[0] for r in right], [r[1] for r in right], fontsize=8.5,
                    family="monospace")
    for tick, (_, _, sig) in zip(ax_p.get_yticklabels(), right):
        tick.set_fontweight("bold" if sig else "normal")
        tick.set_color("0.1" if sig else "0.35")
    ax_p.tick_params(axis="y", length=0)

    # 3. queries won / tied / lost: counts, on whole numbers
    most = 1
    for y, name, seg, m in rows:
        if name == c.baseline:
            continue
        t = tests[(name, seg, m)]
        total = t["wins"] + t["ties"] + t["losses"]
        most = max(most, total)
        left = 0
        for key, _, col in _COUNTS:
            n = t[key]
            ax_n.barh(y, n, left=left, height=0.62, color=col, gid=f"count-{key}")
            if n and n >= 0.09 * total:
                ax_n.text(left + n / 2, y, f"{n:,}", ha="center", va="center", fontsize=8,
                          color="black" if key == "ties" else "white")
            left += n
    ax_n.set_xlim(0, most)
    ax_n.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True, steps=[1, 2, 5, 10]))
    ax_n.set_xlabel("queries against the baseline")
    ax_n.legend(handles=[Patch(color=col, label=lab) for _, lab, col in _COUNTS],
                loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False,
                fontsize=9, handlelength=1.2, columnspacing=1.0, borderaxespad=0.2)

    # the rows: names on the left, block headers in bold on a grey band
    ax_m.set_ylim(bottom, -0.5)
    ax_m.set_yticks([r[0] for r in rows], [labels[r[1]] for r in rows], fontsize=9)
    if heads:
        ax_m.set_yticks([h[0] for h in heads], [h[1] for h in heads], minor=True)
        for tick in ax_m.get_yticklabels(minor=True):
            tick.set_fontweight("bold")
            tick.set_fontsize(9)
        ax_m.tick_params(axis="y", which="minor", length=0)
    for ax in (ax_m, ax_d, ax_n):
        for yh, _, tall in heads:
            ax.axhspan(yh - tall / 2, yh + tall / 2, color="0.92", zorder=0, lw=0)
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    for ax in (ax_d, ax_n):
        ax.tick_params(axis="y", which="both", left=False)
    for ax in (ax_m, ax_d):
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))

    n_queries = (sum(means[(c.baseline, s, measures[0])]["n_queries"] for s in segments))
    n_tests = c.tests.num_rows
    how = (f"{CORRECTION_NAMES[c.correction]}-corrected over {n_tests} comparison{'s' * (n_tests != 1)}"
           if c.correction != "none" else "not corrected")
    by = f" by {_short(c.segment_name)}" if c.segment_name not in (None, "segment") else ""
    fig.suptitle(f"{len(c.system_names)} systems on {n_queries:,} queries"
                 + (f" in {len(segments)} segments{by}" if c.segmented else "")
                 + f"; baseline: {_short(c.baseline, 48)}",
                 fontsize=12, fontweight="bold")
    over = (f" over {c.n_buckets:,} hashed buckets of queries"
            if getattr(c, "method", "queries") == "buckets" else "")
    fig.supxlabel(f"Intervals: {pct} percentile bootstrap{over}, {c.n_resamples:,} resamples "
                     f"(not corrected). p: {test} test, two-sided, {how}; "
                     f"* and a filled marker: p < {alpha:g}.",
                  fontsize=8.5, color="0.3")
    if path is not None:
        fig.savefig(os.fspath(path), dpi=120)
    return fig
