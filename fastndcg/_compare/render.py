"""A :class:`~fastndcg.Comparison` as text, markdown or LaTeX tables.

Per segment and measure, a table of the systems (mean and interval) and one of
the tests against the baseline, then a note saying how the intervals and
p-values were found; the tables are drawn by :func:`fastndcg.tables.render`.
"""

from __future__ import annotations

import math

from ..tables import render

__all__ = ["format_comparison", "CORRECTION_NAMES"]

# how the text names each correction ("{name} corrected")
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
                     "none": "not"}


def _p(x, alpha: float) -> str:
    if x is None:
        return "-"
    star = "*" if x < alpha else ""
    if x >= 1e-3:
        return f"{x:.4f}{star}"
    if x == 0:  # below the smallest double
        return f"<1e-300{star}"
    return f"{x:.1e}{star}"


def _f(x, signed: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if isinstance(x, float) and math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{x:+.4f}" if signed else f"{x:.4f}"


def _blocks(c):
    """(title, system rows, test rows) per segment and measure."""
    srows = c.systems.to_pylist()
    trows = c.tests.to_pylist()
    keys = []
    for r in srows:
        key = (r.get("segment"), r["measure"])
        if key not in keys:
            keys.append(key)
    for seg, measure in keys:
        title = measure
        if c.segmented:
            title = f"{c.segment_name} = {seg!r}, {measure}"
        yield (title,
               [r for r in srows if r.get("segment") == seg and r["measure"] == measure],
               [r for r in trows if r["segment"] == seg and r["measure"] == measure])


def format_comparison(c, fmt: str) -> str:
    """The Comparison ``c`` as ``fmt`` ("text", "markdown" or "latex"): per segment and
    measure its systems and its tests, then the note on how they were found."""
    alpha = 1 - c.confidence
    pct = f"{c.confidence * 100:g}%"
    n_tests = c.tests.num_rows
    if c.method == "buckets":
        how = (f"{pct} percentile bootstrap intervals over {c.n_buckets:,} hashed buckets of "
               f"queries ({c.n_resamples:,} paired resamples, seed {c.seed}); randomization "
               f"test over the buckets' signs; t-test on exact sums"
               + ("" if "wilcoxon" in c.tests_run else
                  "; Wilcoxon not run (it ranks every query against all the others)"))
    else:
        how = (f"{pct} percentile bootstrap intervals ({c.n_resamples:,} paired resamples, "
               f"seed {c.seed})")
    note = (f"{how}; p-values two-sided, {CORRECTION_NAMES[c.correction]} corrected"
            + (f" over {n_tests} comparison{'s' if n_tests != 1 else ''}"
               if c.correction != "none" else "")
            + f"; * marks p < {alpha:g}")
    if c.n_left_out:
        note += f"; {c.n_left_out:,} queries with NaN NDCG left out"
    if c.n_unjudged:
        note += f"; {c.n_unjudged:,} run queries without judgments left out"
    if c.n_missing:
        note += (f"; {c.n_missing:,} judged queries in no run "
                 + ("scored 0 (complete)" if bool(c.reports) and next(iter(c.reports.values())).complete else
                    "left out (complete=True scores them 0)"))
    heads_s = ["system", "queries", "mean", f"{pct} CI"]
    heads_t = [f"vs {c.baseline}", "mean diff", f"{pct} CI", "effect", "p rand", "p t",
               "p wilcoxon", "wins/ties/losses"]
    out = []
    for title, srows, trows in _blocks(c):
        s_body = [[r["system"], f"{r['n_queries']:,}", _f(r["mean"]),
                   f"[{_f(r['ci_low'])}, {_f(r['ci_high'])}]"] for r in srows]
        t_body = [[r["system"], _f(r["mean_diff"], True),
                   f"[{_f(r['ci_low'], True)}, {_f(r['ci_high'], True)}]",
                   _f(r["effect_size"], True), _p(r["p_randomization_adj"], alpha),
                   _p(r["p_t_adj"], alpha), _p(r["p_wilcoxon_adj"], alpha),
                   f"{r['wins']:,}/{r['ties']:,}/{r['losses']:,}"] for r in trows]
        out.append(render(heads_s, s_body, "l" + "r" * (len(heads_s) - 1), fmt, title))
        out.append(render(heads_t, t_body, "l" + "r" * (len(heads_t) - 1), fmt))
        if c.ppi is not None:
            out.append(_ppi_table(c, trows, pct, alpha, fmt))
    if c.ppi is not None:
        note += (f"; prediction-powered differences: {c.ppi['method']}, {pct} normal "
                 f"intervals, p PPI by the normal approximation, corrected as the others; "
                 f"n: queries with human judgments, N: without; {c.ppi['assumption']}")
        if c.ppi["n_human_only"]:
            note += (f"; {c.ppi['n_human_only']:,} queries with human judgments are not "
                     f"compared and are left out")
    if fmt == "latex":
        return "\n".join(out) + f"\n% {note}\n"
    if fmt == "markdown":
        return "\n\n".join(out) + f"\n\n_{note}_\n"
    return "\n\n".join(out) + f"\n\n{note}"


def _ppi_table(c, trows: list, pct: str, alpha: float, fmt: str) -> str:
    """The prediction-powered differences of a block's tests."""
    heads = [f"vs {c.baseline}", "PPI diff", f"{pct} CI", "p PPI", "λ", "n", "N"]
    body = [[r["system"], _f(r["ppi_diff"], True),
             f"[{_f(r['ppi_low'], True)}, {_f(r['ppi_high'], True)}]",
             _p(r["p_ppi_adj"], alpha), _f(r["ppi_lambda"]), f"{r['ppi_n']:,}",
             f"{r['ppi_N']:,}"] for r in trows]
    return render(heads, body, "l" + "r" * (len(heads) - 1), fmt,
                  "prediction-powered (human sample and LLM labels)")
