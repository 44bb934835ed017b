"""Plots of a :class:`fastndcg.compare.Comparison` (matplotlib, an optional extra)."""

from __future__ import annotations

import os

import numpy as np


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'fastndcg[plot]'") from None
    if not os.environ.get("DISPLAY") and not os.environ.get("MPLBACKEND"):
        matplotlib.use("Agg")  # no display: draw to files only
    import matplotlib.pyplot as plt
    return plt


def plot_comparison(c, path, measure: str | None):
    """Two panels: per-query differences against the baseline (histogram), and
    NDCG@k against k with confidence bands (or, with segments, the mean difference
    and its interval in each segment)."""
    if measure is None:
        measure = c.measures[-1]
    if measure not in c.measures:
        raise ValueError(f"measure={measure!r} is not one of the comparison's measures "
                         f"{', '.join(map(repr, c.measures))}")
    plt = _pyplot()
    values = c._arrays["values"]
    base = c._arrays["base"]
    m = c.measures.index(measure)
    others = [s for s in range(len(c.system_names)) if s != base]
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    color = {name: colors[i % len(colors)] for i, name in enumerate(c.system_names)}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)

    # 1. per-query differences: a spike at 0 (ties) would hide the rest, so ties
    # are counted in the legend and the histogram shows the non-zero differences
    diffs = {c.system_names[s]: values[s, m] - values[base, m] for s in others}
    nonzero = np.concatenate([d[d != 0] for d in diffs.values()])
    span = float(np.max(np.abs(nonzero))) if len(nonzero) else 1.0
    bins = np.linspace(-span, span, 61)
    for name, d in diffs.items():
        nz = d[d != 0]
        ties = len(d) - len(nz)
        ax1.hist(nz, bins=bins, histtype="step", linewidth=1.6, color=color[name],
                 label=f"{name}: mean {np.mean(d):+.4f}, {ties / len(d):.0%} ties")
        ax1.axvline(float(np.mean(d)), color=color[name], linestyle="--", linewidth=1)
    ax1.axvline(0, color="0.3", linewidth=0.8)
    ax1.set_xlabel(f"{measure}: system - {c.baseline} (per query, ties left out)")
    ax1.set_ylabel("queries")
    ax1.set_title(f"Per-query differences against {c.baseline}")
    ax1.legend(fontsize=9, loc="upper left")

    rows = c.systems.to_pylist()
    pct = f"{c.confidence * 100:g}%"
    if not c.segmented:
        # 2. the measure against k (its cutoffs among the compared measures), with
        # the bootstrap band of every system; x = k, the whole list (no cutoff) sits
        # right of the largest cutoff
        family = [mm for mm in c.measures if _stem(mm) == _stem(measure)]
        numeric = [_cutoff(x) for x in family if _cutoff(x) is not None]
        right = 1.5 * max(numeric) if numeric else 1.0
        xpos = {mm: (_cutoff(mm) if _cutoff(mm) is not None else right) for mm in family}
        for name in c.system_names:
            mine = {r["measure"]: r for r in rows if r["system"] == name}
            xs = np.array([xpos[mm] for mm in family], float)
            ys = np.array([mine[mm]["mean"] for mm in family])
            lo = np.array([mine[mm]["ci_low"] for mm in family])
            hi = np.array([mine[mm]["ci_high"] for mm in family])
            ax2.plot(xs, ys, marker="o", color=color[name], label=name)
            if len(xs) > 1:
                ax2.fill_between(xs, lo, hi, color=color[name], alpha=0.2, linewidth=0)
            else:
                ax2.errorbar(xs, ys, yerr=[ys - lo, hi - ys], color=color[name], capsize=4)
        ticks = sorted(set(xpos.values()))
        ax2.set_xticks(ticks)
        whole = any(_cutoff(mm) is None for mm in family)
        ax2.set_xticklabels(["all" if t == right and whole else f"{t:g}" for t in ticks])
        ax2.set_xlabel("k")
        label = _stem(measure).upper() if _stem(measure) != "ndcg" else "NDCG"
        ax2.set_ylabel(f"mean {label}@k")
        ax2.set_title(f"{label}@k with {pct} bootstrap bands ({c.n_resamples:,} resamples)")
        ax2.legend(fontsize=9)
        ax2.grid(alpha=0.3)
    else:
        # 2. where the systems win or lose: the difference in each segment
        tests = [r for r in c.tests.to_pylist() if r["measure"] == measure]
        segs = []
        for r in tests:
            if r["segment"] not in segs:
                segs.append(r["segment"])
        k = len(others)
        for j, s in enumerate(others):
            name = c.system_names[s]
            mine = {r["segment"]: r for r in tests if r["system"] == name}
            ys = np.arange(len(segs)) + (j - (k - 1) / 2) * 0.8 / max(k, 1)
            mid = np.array([mine[g]["mean_diff"] for g in segs])
            lo = np.array([mine[g]["ci_low"] for g in segs])
            hi = np.array([mine[g]["ci_high"] for g in segs])
            ax2.errorbar(mid, ys, xerr=[mid - lo, hi - mid], fmt="o", color=color[name],
                         capsize=3, label=name)
        ax2.axvline(0, color="0.3", linewidth=0.8)
        ax2.set_yticks(np.arange(len(segs)))
        ax2.set_yticklabels([str(g) for g in segs])
        ax2.invert_yaxis()
        ax2.set_xlabel(f"{measure}: mean difference against {c.baseline} ({pct} interval)")
        ax2.set_title(f"By {c.segment_name}")
        ax2.legend(fontsize=9)
        ax2.grid(alpha=0.3, axis="x")
    if path is not None:
        fig.savefig(os.fspath(path), dpi=120)
    return fig


def _cutoff(measure: str):
    """The cutoff of a column name (``ap@100(rel=2)`` -> 100), or None."""
    if "@" not in measure:
        return None
    return int(measure.split("@")[1].split("(")[0])


def _stem(measure: str) -> str:
    """The measure of a column name without its cutoff (``ap@100(rel=2)`` -> ``ap(rel=2)``)."""
    head, _, tail = measure.partition("@")
    return head + (tail[tail.index("("):] if "(" in tail else "")
