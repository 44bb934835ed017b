"""The result of a comparison: :class:`Comparison`, and the two tables it holds.

Both methods (query by query, and over buckets) gather their rows into a
:class:`TableRows`, which corrects each test's p-values and makes the ``systems``
and ``tests`` tables of the :class:`Comparison`.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from .. import _validate as V
from .arguments import Settings
from .render import format_comparison
from .stats import adjust

__all__ = ["Comparison", "build", "TableRows", "SYSTEM_COLUMNS", "TEST_COLUMNS"]


@dataclass
class Comparison:
    """What :func:`compare` found.

    Attributes
    ----------
    systems : pyarrow.Table -- per system (and segment): ``system``, ``segment``
        (when segmenting), ``measure`` (``ndcg@K``), ``n_queries``, ``mean``,
        ``ci_low``, ``ci_high`` (percentile bootstrap interval of the mean).
    tests : pyarrow.Table -- per system against the baseline (per segment and
        measure): ``system``, ``baseline``, ``segment`` (null without segments),
        ``measure``, ``n_queries``, ``mean_diff`` (system - baseline), ``ci_low``,
        ``ci_high`` (paired bootstrap interval of the difference), ``effect_size``,
        ``p_randomization``, ``p_t``, ``p_wilcoxon``, the corrected
        ``p_randomization_adj``, ``p_t_adj``, ``p_wilcoxon_adj`` (null for tests not
        run), ``wins``, ``ties``, ``losses``.
    per_query : pyarrow.Table -- the query id, ``segment`` (when segmenting) and one
        column ``"{measure} {system}"`` per system and measure, in the order the
        tests used (grouped by segment, then by query id); None when the comparison
        ran over buckets (it kept no per-query values).
    method : "queries" (query-level resampling, and the Wilcoxon test) or "buckets"
        (the bucket methods, see :mod:`fastndcg.compare`); n_buckets : their number.
    reports : dict -- each system's :class:`fastndcg.Report` (counts of unjudged,
        missing and zero-IDCG queries), per-query tables dropped.
    n_left_out : queries left out because their NDCG is NaN (``zero_idcg="nan"``).
    n_unjudged, n_missing : with qrels, run queries without any judgment (left out,
        as trec_eval does) and judged queries in no run (left out unless
        ``complete=True`` scored them 0), as :class:`fastndcg.Report` counts them.
    confidence, n_resamples, seed, correction, tests_run, baseline : the settings.
    system_names, measures : the systems and the measures compared, in order.
    segmented, segment_name : whether the queries were split by segment, and the
        name of the segment column (None without segments; "segment" when the
        segments were given as a mapping).
    seconds : wall time, evaluations included.
    ppi : with ``human_qrels``, the prediction-powered differences' settings
        (``confidence``, ``ppi``, ``method``, ``assumption``, ``n_human_only``: queries
        judged by people but not compared); ``tests`` then has the columns
        ``ppi_diff``, ``ppi_low``, ``ppi_high``, ``ppi_se``, ``ppi_lambda``, ``ppi_n``
        (queries with human judgments), ``ppi_N`` (without), ``p_ppi`` (two-sided,
        normal approximation) and ``p_ppi_adj`` (corrected across the pairs). None
        without human judgments.
    """
    systems: pa.Table
    tests: pa.Table
    per_query: pa.Table | None
    reports: dict
    n_left_out: int
    confidence: float
    n_resamples: int
    seed: int
    correction: str
    tests_run: tuple
    baseline: str
    system_names: list
    measures: list
    segmented: bool
    segment_name: str | None = None
    n_unjudged: int = 0
    n_missing: int = 0
    seconds: float = 0.0
    inputs: tuple = ()  # the files read (for the plot's output guard)
    method: str = "queries"
    n_buckets: int | None = None
    ppi: dict | None = None

    # ----------------------------------------------------------------- outputs
    def to_dict(self) -> dict[str, Any]:
        """Settings and both tables as plain Python (NaN and infinities as None), what
        ``--format json`` prints."""
        def clean(rows):
            return [{k: (None if isinstance(x, float) and not math.isfinite(x) else x)
                     for k, x in r.items()} for r in rows]
        return {"baseline": self.baseline, "method": self.method,
                "n_buckets": self.n_buckets, "confidence": self.confidence,
                "n_resamples": self.n_resamples, "seed": self.seed,
                "correction": self.correction, "tests_run": list(self.tests_run),
                "n_left_out": self.n_left_out, "n_unjudged": self.n_unjudged,
                "n_missing": self.n_missing,
                "systems": clean(self.systems.to_pylist()),
                "tests": clean(self.tests.to_pylist()),
                **({} if self.ppi is None else {"ppi": dict(self.ppi)}),
                "seconds": round(self.seconds, 4)}

    def format_table(self) -> str:
        """An aligned, readable text report."""
        return format_comparison(self, "text")

    def to_markdown(self) -> str:
        """The report as GitHub-flavoured markdown tables."""
        return format_comparison(self, "markdown")

    def to_latex(self) -> str:
        """The report as LaTeX ``tabular`` environments (booktabs rules)."""
        return format_comparison(self, "latex")

    def plot(self, path: str | os.PathLike | None = None, *,
             measure: str | Sequence[str] | None = None):
        """Draw the comparison with matplotlib (``pip install 'fastndcg[plot]'``), one
        row per system: each system's mean with its interval; its paired difference
        against the baseline with its interval, a line at zero, and the corrected
        p-value of the first test run (starred and filled below ``1 - confidence``);
        and the queries it wins, ties and loses. Rows come in one block per measure
        (with segments: per segment). ``measure`` names the measure(s) drawn
        (default: every one; with segments, the last). Saves to ``path`` when given;
        returns the matplotlib Figure."""
        from .plot import plot_comparison
        if path is not None:  # the one output guard (the inputs, when files, are refused)
            path = V.output_path(path, "path", self.inputs, exts=V.PLOT_EXTS)
        return plot_comparison(self, path, measure)

    def __repr__(self) -> str:
        return self.format_table()

    def _repr_markdown_(self) -> str:  # notebooks
        return self.to_markdown()


def build(st: Settings, systems_t: pa.Table, tests_t: pa.Table, per_query, reports: dict,
          n_left_out: int, measures: list, segmented: bool, started: float, inputs: tuple,
          method: str) -> Comparison:
    """The Comparison of a run's tables, settings and reports (whose per-query tables
    are dropped)."""
    for rep in reports.values():
        rep.forget_per_query()
    return Comparison(systems_t, tests_t, per_query, reports, n_left_out,
                      st.confidence, st.n_resamples, st.seed, st.correction, st.tests,
                      st.names[st.base], st.names, list(measures), segmented,
                      st.segment if isinstance(st.segment, str) else
                      (None if st.segment is None else "segment"),
                      max(r.n_unjudged for r in reports.values()),
                      max(r.n_missing for r in reports.values()),
                      time.perf_counter() - started, inputs=inputs, method=method,
                      n_buckets=st.n_buckets if method == "buckets" else None)


SYSTEM_COLUMNS = ("system", "segment", "measure", "n_queries", "mean", "ci_low", "ci_high")
TEST_COLUMNS = ("system", "baseline", "segment", "measure", "n_queries", "mean_diff", "ci_low",
                "ci_high", "effect_size", "p_randomization", "p_t", "p_wilcoxon",
                "p_randomization_adj", "p_t_adj", "p_wilcoxon_adj", "wins", "ties", "losses")


class TableRows:
    """The rows of a Comparison's ``systems`` and ``tests`` tables, gathered a row at a
    time (by either method), then made into the two tables with the p-values corrected.

    >>> rows = TableRows()
    >>> rows.add_system(system="a", segment=None, measure="ndcg@3", n_queries=2, mean=0.5,
    ...                 ci_low=0.25, ci_high=0.75)
    >>> rows.add_test(dict(system="b", baseline="a", segment=None, measure="ndcg@3",
    ...                    n_queries=2, mean_diff=0.25, p_t=0.02, wins=2, ties=0, losses=0))
    >>> systems, tests = rows.tables(("t",), "none", pa.string(), False)
    >>> systems.column_names
    ['system', 'measure', 'n_queries', 'mean', 'ci_low', 'ci_high']
    >>> tests.select(["system", "p_t", "p_t_adj", "p_wilcoxon"]).to_pylist()
    [{'system': 'b', 'p_t': 0.02, 'p_t_adj': 0.02, 'p_wilcoxon': None}]
    """

    def __init__(self) -> None:
        self.systems: dict[str, list] = {k: [] for k in SYSTEM_COLUMNS}
        self.tests: dict[str, list] = {k: [] for k in TEST_COLUMNS}

    def add_system(self, **row) -> None:
        """One system's row (every column of SYSTEM_COLUMNS)."""
        for k in SYSTEM_COLUMNS:
            self.systems[k].append(row[k])

    def add_test(self, row: dict) -> None:
        """One system against the baseline (the corrected p-values come later; a
        column missing from ``row`` is null)."""
        for k in TEST_COLUMNS:
            if not k.endswith("_adj"):
                self.tests[k].append(row.get(k))

    def tables(self, tests_run: tuple, correction: str, seg_type: pa.DataType,
               segmented: bool) -> tuple[pa.Table, pa.Table]:
        """The systems and tests tables; each test's p-values corrected."""
        sys_rows, test_rows = self.systems, self.tests
        for test, col in (("randomization", "p_randomization"), ("t", "p_t"),
                          ("wilcoxon", "p_wilcoxon")):
            raw = test_rows[col]
            if test in tests_run:
                adj = adjust(np.array(raw, dtype=np.float64), correction)
                test_rows[col + "_adj"] = [float(x) for x in adj]
            else:
                test_rows[col] = [None] * len(raw)
                test_rows[col + "_adj"] = [None] * len(raw)
        systems = pa.table({
            "system": pa.array(sys_rows["system"], pa.string()),
            **({"segment": pa.array(sys_rows["segment"], seg_type)} if segmented else {}),
            "measure": pa.array(sys_rows["measure"], pa.string()),
            "n_queries": pa.array(sys_rows["n_queries"], pa.int64()),
            "mean": pa.array(sys_rows["mean"], pa.float64()),
            "ci_low": pa.array(sys_rows["ci_low"], pa.float64()),
            "ci_high": pa.array(sys_rows["ci_high"], pa.float64()),
        })
        types = {"system": pa.string(), "baseline": pa.string(), "segment": seg_type,
                 "measure": pa.string(), "n_queries": pa.int64(), "wins": pa.int64(),
                 "ties": pa.int64(), "losses": pa.int64()}
        tests = pa.table({k: pa.array(test_rows[k], types.get(k, pa.float64()))
                          for k in TEST_COLUMNS})
        return systems, tests
