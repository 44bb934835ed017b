#!/usr/bin/env python
"""Render the benchmark report from the suite's pytest-benchmark JSON.

This script only renders: it runs nothing and times nothing. The numbers come
from one run of the suite (``benchmarks/``), which is the one timing harness:

    # 1. run the suite to JSON (full sizes: ~50M rows a shape; heavy cases left out)
    FASTNDCG_BENCH_FULL=1 python -m pytest benchmarks --benchmark-enable \\
        --benchmark-json=docs/benchmarks/results.json -m "not heavy"

    # 2. render docs/benchmarks/README.md (and PNG plots, if matplotlib is installed)
    python scripts/bench_report.py                      # --json FILE, --out DIR, --note TEXT

Without ``FASTNDCG_BENCH_FULL=1`` the suite runs at small sizes (a smoke test; the
report then says that its targets are indicative only).

What is rendered, all from the one JSON file:

* the targets of the kernel, logs and peers (and the other targets the suite measures),
  each with its measured value, met / missed, and the benchmarks it comes from;
* one table per pytest-benchmark group: every system's best, median and mean time,
  rows/s, and fastndcg's ratio to it -- a speed-up for a peer (another tool doing
  the same work on the same input), a fraction for a bound (a bare read, a
  parallel sum: work fastndcg cannot avoid); entries are paired by their
  ``extra_info`` (``system``, ``role``, ``case``: see ``benchmarks/_data.describe``);
  times, rows/s and ratios are of the best round, except in the start-up groups
  (:data:`MEDIAN_GROUPS`: fresh processes, whose rounds vary most, Spark, and the
  side-by-side groups of ranx's shape), where they are of
  the median round: a ratio of medians, never the best round of one side against the
  best of the other;
* the sweeps (kernel against the number of queries, the list length, k, dtypes) as
  tables of rows/s with a column per size, and as plots;
* the machine, the library versions and the load average, recorded by
  ``benchmarks/conftest.py`` into the JSON's ``machine_info``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from benchmarks._report import fmt_time  # noqa: E402  (formatting only; imports nothing heavy)

DEFAULT_JSON = os.path.join(REPO, "docs", "benchmarks", "results.json")
DEFAULT_OUT = os.path.join(REPO, "docs", "benchmarks")

RUN_COMMAND = ('FASTNDCG_BENCH_FULL=1 python -m pytest benchmarks --benchmark-enable '
               '--benchmark-json=docs/benchmarks/results.json -m "not heavy"')
RENDER_COMMAND = "python scripts/bench_report.py"

# groups in the order they are shown, with a sentence each; others follow, sorted
GROUPS = {
    "compare-2": "`fastndcg.compare(path, [\"score_a\", \"score_b\"], k=10, n_resamples=10_000)` "
                 "on a Parquet log of 1,000,000 queries (~10 rows each): two evaluations, "
                 "bootstrap intervals, randomization, t and Wilcoxon tests, Holm.",
    "compare-5x20": "The same with five score columns and `segment=\"market\"` (20 values).",
    "kernel-5rows": "`fastndcg.ndcg(scores, labels, offsets, k=[1,3,5,10])`, ~5 rows a query "
                    "(float32 scores with ties, int8 labels), beside a Numba parallel sum over "
                    "the same arrays.",
    "kernel-10rows": "The same at ~10 rows a query (a results page).",
    "kernel-50rows": "The same at ~50 rows a query.",
    "kernel-1000rows": "Lists of 1,000 rows: k=100 beside k=10 on the same lists.",
    "evaluate-10rows": "`fastndcg.evaluate(path, k=[1,3,5,10])` from a Parquet log of ~10 rows "
                       "a query, beside pyarrow's bare read of the same three columns.",
    "evaluate-50rows": "The same at ~50 rows a query.",
    "list-sql-10rows": "List mode from the ~10-rows-a-query log, NDCG@10, ties broken by "
                       "position in the file: fastndcg (`ties=\"stable\"`) against DuckDB SQL "
                       "and polars written as a user would (per-query values checked equal "
                       "first).",
    "list-sql-50rows": "The same on the ~50-rows-a-query log.",
    "qrels-int64": "Qrels mode from Parquet (run of ~100 documents a query, qrels of ~30% of "
                   "them plus unretrieved judged documents), int64 ids, `ties=\"trec\"`, "
                   "NDCG@10: fastndcg against DuckDB SQL and polars (left join, ideal from all "
                   "judged documents; per-query values checked equal first).",
    "qrels-string": "The same with string ids.",
    "trec": "Qrels mode from TREC text files, end to end (parsing included), against "
            "pytrec_eval; per-query values checked equal first.",
    "startup": "Fresh processes, wall clock from outside (process start included), warm "
               "compile cache unless said otherwise.",
    "startup-trec": "Fresh processes on a real TREC run (Core 2018, title + RM3: 50 queries × "
                    "1,000 documents; `tests/data/real`) and its qrels, against trec_eval built "
                    "from `tests/trec_eval` and pytrec_eval (case `core18`); and N perturbed "
                    "copies of the run with distinct run tags in one `fastndcg evaluate` "
                    "against trec_eval run N times in a shell loop (case `core18xN`). Every "
                    "answer checked against trec_eval's first. Times and ratios are medians.",
    "sklearn": "`fastndcg.ndcg_score` against scikit-learn's `ndcg_score` (tie-aware), same "
               "matrix.",
    "sklearn-dense": "`ndcg_score` on dense matrices, tie-aware and `ignore_ties=True` (tie-free "
                     "data).",
    "ranx": "Qrels mode from in-memory tables against ranx (tie-free data).",
    "ranx-parquet": "A Parquet log end to end against ranx reading it through pandas "
                    "(tie-free data).",
    "ranx-shape": "ranx's own benchmark shape (queries x 100 documents, 1-9 judged with grades "
                  "1-5, uniform scores), NDCG@10 with the join: fastndcg on Arrow tables (int64 "
                  "and string ids, default semantics and presets) against `ranx.evaluate` on its "
                  "typed lists (as its paper times it) and on its Run/Qrels; per-query values "
                  "checked equal to ranx's first. Medians.",
    "whole-lists": "Whole-list NDCG, AP and R-precision on the joined arrays of ranx's shape, "
                   "against the bandwidth probe over the same arrays. Medians.",
    "kernel-queries": "The kernel against the number of queries (~20 rows each), linear gain.",
    "kernel-length": "The kernel against the list length, k=10, linear gain.",
    "kernel-k": "The kernel against the cutoff, lists of 1,000 rows, linear gain.",
    "kernel-skewed": "One huge query among many small ones.",
    "kernel-dtypes": "The kernel on other dtypes (~50 rows a query).",
    "per-query": "`evaluate` keeping per-query results in memory, writing them to a file or "
                 "a directory, or keeping none (~5 rows a query).",
    "dask": "A multi-file dataset: one process against `fastndcg.dask.evaluate` on two worker "
            "processes.",
    "memory": "Peak resident memory of the command line on a 200M-row log.",
    "spark": "Spark `local[2]`, NDCG@10 of a Parquet log of ~10 rows a query: "
             "`fastndcg.spark.evaluate` on the path (read by the executors) and on the "
             "DataFrame (shuffled), against a window-function query and "
             "`RankingMetrics.ndcgAt` (binary gain), beside the shuffle's floor and "
             "`fastndcg.evaluate` on one machine; answers checked first. Medians.",
    "spark-memory": "Peak resident memory of Spark's Python workers, a log against 10× "
                    "its queries.",
}
# groups whose times, rows/s and ratios are of the median round (fresh processes, Spark,
# and ranx's shape side by side)
MEDIAN_GROUPS = ("startup", "startup-trec", "spark", "ranx-shape", "whole-lists")
SWEEPS = {"kernel-queries": "queries", "kernel-length": "rows per query", "kernel-k": "k",
          "kernel-dtypes": "dtypes"}


# --------------------------------------------------------------------------- data

@dataclass
class Entry:
    """One benchmark of the JSON."""

    group: str
    name: str
    system: str
    role: str
    case: str
    n_rows: int | None
    n_queries: int | None
    best: float
    mean: float
    rounds: int
    extra: dict = field(default_factory=dict)
    median: float = 0.0

    @property
    def basis(self) -> str:
        """Which round the entry's time is: "median" (start-up groups) or "best"."""
        return "median" if self.group in MEDIAN_GROUPS else "best"

    @property
    def time(self) -> float:
        """The time its rows/s and ratios come from (see :attr:`basis`)."""
        return self.median if self.basis == "median" else self.best

    @property
    def rate(self) -> float | None:
        return self.n_rows / self.time if self.n_rows else None

    @property
    def label(self) -> str:
        return self.system + (f" [{self.case}]" if self.case else "")


def load(path: str) -> tuple[dict, list[Entry]]:
    with open(path) as f:
        data = json.load(f)
    entries = []
    for b in data.get("benchmarks", []):
        extra = b.get("extra_info") or {}
        stats = b.get("stats") or {}
        if not stats.get("min"):
            continue
        role = extra.get("role") or ("fastndcg" if "fastndcg" in str(extra.get("system", ""))
                                     else "peer")
        entries.append(Entry(group=b.get("group") or "(none)", name=b.get("name", ""),
                             system=str(extra.get("system") or b.get("name", "")), role=role,
                             case=str(extra.get("case") or ""), n_rows=extra.get("n_rows"),
                             n_queries=extra.get("n_queries"), best=float(stats["min"]),
                             mean=float(stats["mean"]), rounds=int(stats.get("rounds", 0)),
                             extra=extra, median=float(stats.get("median") or stats["min"])))
    return data, entries


def in_group(entries: list[Entry], group: str) -> list[Entry]:
    return [e for e in entries if e.group == group]


def find(entries: list[Entry], group: str, *, role: str | None = None,
         name: str | None = None, case: str | None = None,
         system: str | None = None) -> Entry | None:
    """The first entry of ``group`` matching every given field (``name``: the test's
    name exactly; ``system``: a prefix)."""
    for e in in_group(entries, group):
        if role is not None and e.role != role:
            continue
        if name is not None and e.name != name:
            continue
        if case is not None and e.case != case:
            continue
        if system is not None and not e.system.startswith(system):
            continue
        return e
    return None


def fastest_bound(entries: list[Entry], group: str) -> Entry | None:
    bounds = [e for e in in_group(entries, group) if e.role == "bound" and e.rate]
    return max(bounds, key=lambda e: e.rate) if bounds else None


def partners(entries: list[Entry], other: Entry) -> list[Entry]:
    """fastndcg's entries that ``other`` is compared with: the same case, or all of
    the group where ``other`` has none."""
    return [e for e in in_group(entries, other.group) if e.role == "fastndcg"
            and (not other.case or e.case == other.case)]


def ratio(fast: Entry, other: Entry) -> float:
    """fastndcg's speed over ``other``'s: rows/s ÷ rows/s, or time ÷ time."""
    if fast.rate and other.rate:
        return fast.rate / other.rate
    return other.time / fast.time


# --------------------------------------------------------------------------- formatting

def fmt_rate(rows_per_s: float | None) -> str:
    if not rows_per_s:
        return "—"
    if rows_per_s >= 1e9:
        return f"{rows_per_s / 1e9:.2f}G"
    if rows_per_s >= 1e6:
        return f"{rows_per_s / 1e6:.1f}M"
    return f"{rows_per_s / 1e3:.0f}k"


def fmt_ratio(value: float) -> str:
    return f"{value:,.0f}×" if value >= 100 else (f"{value:.1f}×" if value >= 1 else
                                                   f"{value:.2f}×")


def fmt_count(n) -> str:
    return "—" if not n else f"{n:,}"


def met(ok: bool | None) -> str:
    return "—" if ok is None else ("met" if ok else "**missed**")


# --------------------------------------------------------------------------- targets

@dataclass
class Target:
    what: str
    target: str
    measured: str = "not measured in this run"
    ok: bool | None = None
    source: str = ""


def _rate_target(t: Target, e: Entry | None, floor: float, extra: str = "") -> Target:
    if e is not None and e.rate:
        t.measured = f"{fmt_rate(e.rate)} rows/s ({fmt_count(e.n_rows)} rows in " \
                     f"{fmt_time(e.time)}{_basis(e)}){extra}"
        t.ok = e.rate >= floor
        t.source = f"`{e.group}`: {e.label}"
    return t


def _speedup_target(t: Target, fast: Entry | None, peer: Entry | None, floor: float) -> Target:
    if fast is not None and peer is not None:
        r = ratio(fast, peer)
        t.measured = f"{fmt_ratio(r)} ({fmt_time(fast.time)} vs {fmt_time(peer.time)}{_basis(fast)})"
        t.ok = r >= floor
        t.source = f"`{fast.group}`: {fast.label} ÷ {peer.label}"
    return t


def _seconds_target(t: Target, e: Entry | None, ceiling: float, value: float | None = None,
                    detail: str = "") -> Target:
    if e is not None:
        v = e.time if value is None else value
        t.measured = fmt_time(v) + _basis(e) + detail
        t.ok = v <= ceiling
        t.source = f"`{e.group}`: {e.label}"
    return t


def _basis(e: Entry) -> str:
    return ", median" if e.basis == "median" else ""


def _time_ratio_target(t: Target, fast: Entry | None, peer: Entry | None,
                       ceiling: float) -> Target:
    """fastndcg's time as a multiple of the peer's (lower is better), of their medians
    in the start-up groups."""
    if fast is not None and peer is not None:
        r = fast.time / peer.time
        t.measured = (f"{r:.2f}× ({fmt_time(fast.time)} vs {fmt_time(peer.time)}"
                      f"{', medians' if fast.basis == 'median' else ''})")
        t.ok = r <= ceiling
        t.source = f"`{fast.group}`: {fast.label} ÷ {peer.label}"
    return t


def many_runs_case(entries: list[Entry]) -> str | None:
    """The case of the many-runs comparison (``core18xN``), if the JSON has it."""
    for e in in_group(entries, "startup-trec"):
        if re.fullmatch(r"core18x\d+", e.case):
            return e.case
    return None


def compare_targets(entries: list[Entry]) -> list[Target]:
    """The targets of comparing rankers."""
    out = []
    for group, what, ceiling in (
            ("compare-2", "`fastndcg.compare`: two systems, 1,000,000 queries, NDCG@10, 10,000 "
                          "resamples (bootstrap and randomization), evaluation included", 15.0),
            ("compare-5x20", "`fastndcg.compare`: five systems, 1,000,000 queries, 20 segments, "
                             "same settings", 60.0)):
        e = find(entries, group, role="fastndcg")
        t = Target(what, f"≤ {ceiling:g} s")
        if e is not None:
            _seconds_target(t, e, ceiling,
                            detail=f" ({e.extra.get('queries', 0):,} queries, "
                                   f"{e.extra.get('resamples', 0):,} resamples)")
        out.append(t)
    return out


def log_targets(entries: list[Entry]) -> list[Target]:
    """The start-up and peer targets."""
    out = []
    out.append(_rate_target(Target("kernel, ~10 rows a query, k=[1,3,5,10]", "≥ 150M rows/s"),
                            find(entries, "kernel-10rows", role="fastndcg"), 150e6))
    out.append(_rate_target(Target("kernel, ~50 rows a query, k=[1,3,5,10]", "≥ 250M rows/s"),
                            find(entries, "kernel-50rows", role="fastndcg"), 250e6))
    k100 = find(entries, "kernel-1000rows", role="fastndcg", case="k=100")
    k10 = find(entries, "kernel-1000rows", role="fastndcg", case="k=10")
    extra = f"; k=10 on the same lists {fmt_rate(k10.rate)} rows/s" if k10 and k10.rate else ""
    out.append(_rate_target(Target("kernel, k=100 on 1,000-row lists", "≥ 100M rows/s"), k100,
                            100e6, extra))
    for n in (10, 50):
        group = f"evaluate-{n}rows"
        t = Target(f"`evaluate` from Parquet ÷ pyarrow's bare read of the same columns, "
                   f"~{n} rows a query", "≥ 0.7")
        fast, bound = find(entries, group, role="fastndcg"), fastest_bound(entries, group)
        if fast is not None and bound is not None:
            r = ratio(fast, bound)
            t.measured = (f"{r:.2f} ({fmt_rate(fast.rate)} vs {fmt_rate(bound.rate)} rows/s, "
                          f"{fmt_count(fast.n_rows)} rows)")
            t.ok, t.source = r >= 0.7, f"`{group}`: {fast.label} ÷ {bound.label} (the faster read)"
        out.append(t)
    cli = find(entries, "startup", case="cli-log")
    t = Target("`fastndcg evaluate LOG.parquet` (50M rows) as a new process, wall", "≤ 1.3 s")
    out.append(_seconds_target(t, cli, 1.3, detail=(
        f" ({fmt_count(cli.n_rows)} rows, {fmt_rate(cli.rate)} rows/s end to end)"
        if cli is not None else "")))
    imp = find(entries, "startup", case="import")
    detail = ""
    if imp is not None and "import_s" in imp.extra:
        detail = f" (the import itself, timed inside the process: {fmt_time(imp.extra['import_s'])})"
    out.append(_seconds_target(Target('`import fastndcg` (`python -c "import fastndcg"`, wall)',
                                      "≤ 0.3 s"), imp, 0.3, detail=detail))
    out.append(_seconds_target(Target("`fastndcg evaluate RUN --qrels QRELS --preset trec_eval "
                                      "-m ndcg_cut.5,10` on Core 2018 (50k run lines), wall",
                                      "≤ 0.5 s"),
                               find(entries, "startup-trec", name="test_cli_trec"), 0.5))
    first = find(entries, "startup-trec", case="first-evaluate")
    t = Target("first `fastndcg.evaluate` call in a new process, warm cache, beyond the import",
               "≤ 0.15 s")
    if first is not None and "first_call_s" in first.extra:
        _seconds_target(t, first, 0.15, value=first.extra["first_call_s"],
                        detail=f" (import {fmt_time(first.extra['import_s'])}; whole process "
                               f"{fmt_time(first.time)})")
    out.append(t)
    q64 = find(entries, "qrels-int64", role="fastndcg")
    out.append(_rate_target(Target("qrels mode from Parquet, int64 ids", "≥ 40M rows/s"), q64,
                            40e6))
    out.append(_speedup_target(Target("qrels mode from Parquet, int64 ids, vs DuckDB SQL",
                                      "≥ 8×"), q64,
                               find(entries, "qrels-int64", system="DuckDB"), 8.0))
    out.append(_rate_target(Target("qrels mode from Parquet, string ids", "≥ 20M rows/s"),
                            find(entries, "qrels-string", role="fastndcg"), 20e6))
    out.append(_speedup_target(Target("TREC text files vs pytrec_eval, end to end", "≥ 12×"),
                               find(entries, "trec", role="fastndcg"),
                               find(entries, "trec", role="peer"), 12.0))
    for peer in ("DuckDB", "polars"):
        out.append(_speedup_target(Target(f"list mode from Parquet, ~10 rows a query, vs {peer}",
                                          "≥ 10×"),
                                   find(entries, "list-sql-10rows", role="fastndcg"),
                                   find(entries, "list-sql-10rows", system=peer), 10.0))
    return out


def spark_targets(entries: list[Entry]) -> list[Target]:
    """The targets of evaluating in Spark (ratios of medians, one session)."""
    read = find(entries, "spark", role="fastndcg", case="path")
    shuffled = find(entries, "spark", role="fastndcg", case="dataframe")
    window = find(entries, "spark", system="Spark window")
    out = [_speedup_target(Target("`fastndcg.spark.evaluate(path)` vs Spark's window-function "
                                  "NDCG@10", "≥ 5×"), read, window, 5.0),
           _speedup_target(Target("`fastndcg.spark.evaluate(DataFrame)` (shuffled) vs the "
                                  "window-function NDCG@10", "≥ 1.5×"), shuffled, window, 1.5),
           _time_ratio_target(Target("the shuffle path ÷ Spark's floor (the same shuffle and an "
                                     "empty `mapInArrow`)", "≤ 1.3×"), shuffled,
                              find(entries, "spark", role="bound", case="dataframe"), 1.3)]
    one = find(entries, "spark", role="bound", case="path")
    t = Target("Spark's overhead: `fastndcg.spark.evaluate(path)` ÷ `fastndcg.evaluate(path)`",
               "measured")
    if read is not None and one is not None:
        t.measured = f"{read.time / one.time:.1f}× ({fmt_time(read.time)} vs {fmt_time(one.time)}, medians)"
        t.source = f"`spark`: {read.label} ÷ {one.label}"
    out.append(t)
    mem = find(entries, "spark-memory", case="memory")
    for case in ("path", "dataframe"):
        t = Target(f"peak RSS of a Spark Python worker, 10× the queries ÷ 1×, {case}", "≤ 1.3×")
        if mem is not None and mem.extra.get("ratio"):
            peaks = mem.extra["worker_peak_rss"]
            r = mem.extra["ratio"][case]
            t.measured = (f"{r:.2f}× ({peaks[case + ' 1x'] / 2**20:,.0f} MiB → "
                          f"{peaks[case + ' 10x'] / 2**20:,.0f} MiB)")
            t.ok, t.source = r <= 1.3, f"`spark-memory`: {mem.label}"
        out.append(t)
    return out


def design_targets(entries: list[Entry]) -> list[Target]:
    """The other targets that the suite measures."""
    out = []
    fast, bound = find(entries, "kernel-50rows", role="fastndcg"), fastest_bound(entries,
                                                                                 "kernel-50rows")
    t = Target("kernel ÷ Numba parallel sum over the same arrays, ~50 rows a query", "≥ 0.10")
    if fast is not None and bound is not None:
        r = ratio(fast, bound)
        t.measured, t.ok = f"{r:.3f} ({fmt_rate(fast.rate)} vs {fmt_rate(bound.rate)} rows/s)", \
            r >= 0.10
        t.source = f"`kernel-50rows`: {fast.label} ÷ {bound.label}"
    out.append(t)
    out.append(_speedup_target(Target("`ndcg_score` vs scikit-learn, tie-aware, same matrix",
                                      "≥ 100×"),
                               find(entries, "sklearn", role="fastndcg"),
                               find(entries, "sklearn", role="peer"), 100.0))
    cli = find(entries, "startup", case="cli-log")
    out.append(_rate_target(Target("`fastndcg evaluate` on a 50M-row Parquet log, end to end "
                                   "(process start included)", "≥ 40M rows/s"), cli, 40e6))
    first = find(entries, "startup", case="first-result")
    out.append(_seconds_target(Target("new process, compiled cache present: import + first "
                                      "result (wall)", "≤ 1 s"), first, 1.0))
    out.append(_time_ratio_target(Target("a typical TREC run as a command, warm cache (Core 2018, "
                                         "`--preset trec_eval -m ndcg_cut.5,10`), ÷ trec_eval's "
                                         "wall time", "≤ 5×"),
                                  find(entries, "startup-trec", name="test_cli_trec"),
                                  find(entries, "startup-trec", name="test_trec_eval_binary"),
                                  5.0))
    case = many_runs_case(entries)
    n = case.split("x", 1)[1] if case else "100"
    out.append(_time_ratio_target(Target(f"{n} runs in one command ÷ trec_eval run {n} times "
                                         f"(a shell loop)", "≤ 0.5×"),
                                  find(entries, "startup-trec", case=case, role="fastndcg"),
                                  find(entries, "startup-trec", case=case, role="peer"), 0.5))
    cold = find(entries, "startup", case="cold")
    t = Target("first call ever (empty cache), demo dtypes: compiling", "≤ 10 s")
    if cold is not None and "first_call_s" in cold.extra:
        _seconds_target(t, cold, 10.0, value=cold.extra["first_call_s"])
    out.append(t)
    mem = find(entries, "memory", case="memory")
    t = Target("peak memory, `fastndcg evaluate` on a 200M-row Parquet log", "≤ 1 GiB")
    if mem is not None and mem.extra.get("peak_rss"):
        peak = mem.extra["peak_rss"]
        t.measured, t.ok = f"{peak / 2**20:,.0f} MiB", peak <= 2**30
        t.source = f"`memory`: {mem.label}"
    out.append(t)
    return out + ranx_shape_targets(entries)


def ranx_shape_targets(entries: list[Entry]) -> list[Target]:
    """The targets of ranx's own benchmark shape and of the whole-list measures."""
    shape = "ranx-shape"
    default = next((e for e in in_group(entries, shape) if e.system == "fastndcg int64 ids"),
                   None)
    strings = next((e for e in in_group(entries, shape) if e.system == "fastndcg string ids"),
                   None)
    out = [_time_ratio_target(Target("ranx's shape, NDCG@10 from Arrow tables, int64 ids, ÷ "
                                     "`ranx.evaluate` on its typed lists", "≤ 1.0×"),
                              default, find(entries, shape, system="ranx typed lists"), 1.0),
           _time_ratio_target(Target("ranx's shape, string ids ÷ int64 ids", "≤ 1.3×"),
                              strings, default, 1.3)]
    for preset in ("ranx", "trec_eval"):
        out.append(_time_ratio_target(
            Target(f"ranx's shape, `preset=\"{preset}\"` ÷ the default semantics", "≤ 1.1×"),
            find(entries, shape, system=f"fastndcg int64 ids, preset {preset}"), default, 1.1))
    for what in ("ndcg float32", "ndcg float64", "AP", "R-precision"):
        out.append(_rate_target(Target(f"whole-list {what} on the joined arrays of ranx's shape",
                                       "≥ 100M rows/s"),
                                find(entries, "whole-lists", system=f"fastndcg {what}"), 100e6))
    return out


def target_table(targets: list[Target]) -> list[str]:
    lines = ["| what | measured | target | met? | from (group: benchmark) |",
             "|---|---|---|---|---|"]
    for t in targets:
        lines.append(f"| {t.what} | {t.measured} | {t.target} | {met(t.ok)} | {t.source} |")
    return lines


# --------------------------------------------------------------------------- tables

def group_table(entries: list[Entry], group: str) -> list[str]:
    """Every entry of ``group``: times, rows/s and fastndcg's ratios to the others."""
    lines = ["| system | role | rows | best | median | mean | rounds | rows/s | fastndcg ÷ this |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    rows = sorted(in_group(entries, group),
                  key=lambda e: (e.case, {"fastndcg": 0, "bound": 1, "peer": 2}.get(e.role, 3),
                                 e.time))
    for e in rows:
        if e.role == "fastndcg":
            cell = "—"
        else:
            parts = []
            for f in partners(entries, e):
                r = ratio(f, e)
                who = f" ({f.case})" if f.case and not e.case else ""
                if e.role == "bound":
                    parts.append(f"{r:.3f} of its speed{who}")
                elif r >= 1:
                    parts.append(f"{fmt_ratio(r)} faster{who}")
                else:
                    parts.append(f"**{fmt_ratio(1 / r)} slower**{who}")
            cell = "; ".join(parts) or "—"
        extra = []
        for key in ("import_s", "first_call_s"):
            if key in e.extra:
                extra.append(f"{key[:-2].replace('_', ' ')} {fmt_time(e.extra[key])}")
        if e.extra.get("peak_rss"):
            extra.append(f"peak RSS {e.extra['peak_rss'] / 2**20:,.0f} MiB")
        label = e.label + (f" ({', '.join(extra)})" if extra else "")
        lines.append(f"| {label} | {e.role} | {fmt_count(e.n_rows)} | {fmt_time(e.best)} | "
                     f"{fmt_time(e.median)} | {fmt_time(e.mean)} | {e.rounds} | "
                     f"{fmt_rate(e.rate)} | {cell} |")
    return lines


def case_key(case: str):
    """Sort key of a sweep's case label ("1e+03", "len10", "k100", "float32-int8")."""
    m = re.search(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", case)
    return (0, float(m.group(0)), case) if m else (1, 0.0, case)


def sweep_table(entries: list[Entry], group: str) -> list[str]:
    """Rows/s of each system (rows) at each size (columns), then fastndcg's ratios."""
    items = in_group(entries, group)
    cases = sorted({e.case for e in items}, key=case_key)
    systems = list(dict.fromkeys(e.system for e in sorted(
        items, key=lambda e: {"fastndcg": 0, "bound": 1, "peer": 2}.get(e.role, 3))))
    lines = ["| rows/s \\ case | " + " | ".join(cases) + " |", "|---|" + "---:|" * len(cases)]
    cell = {(e.system, e.case): e for e in items}
    for s in systems:
        lines.append(f"| {s} | " + " | ".join(
            fmt_rate(cell[(s, c)].rate) if (s, c) in cell else "" for c in cases) + " |")
    lines += ["", "fastndcg ÷ each (speed-up over a peer; fraction of a bound's speed):", "",
              "| system \\ case | " + " | ".join(cases) + " |",
              "|---|" + "---:|" * len(cases)]
    for s in systems:
        cells, any_value = [], False
        for c in cases:
            e, f = cell.get((s, c)), cell.get(("fastndcg", c))
            if e is None or f is None or e.role == "fastndcg":
                cells.append("")
                continue
            r = ratio(f, e)
            cells.append(f"{r:.3f}" if e.role == "bound" else fmt_ratio(r))
            any_value = True
        if any_value:
            lines.append(f"| {s} | " + " | ".join(cells) + " |")
    return lines


# --------------------------------------------------------------------------- plots

def fmt_tick(x: float, _pos=None) -> str:
    """A log axis's tick: 1, 10, 100, 1k, 10k, 1M, 1G (and 0.1, 0.01 below one)."""
    if x <= 0:
        return ""
    for unit, name in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= unit:
            return f"{x / unit:g}{name}"
    return f"{x:g}"


def fmt_plain(x: float, _pos=None) -> str:
    """A log axis's tick as a plain number: 0.1, 1, 10, 1,000."""
    if x <= 0:
        return ""
    return f"{x:,.0f}" if x >= 1 else f"{x:g}"


# the sweeps drawn: group, file, title, x label, y label, the value drawn, which way is
# better, the x and y ticks' format
SWEEP_PLOTS = [
    ("kernel-queries", "throughput_vs_queries.png",
     "Kernel throughput against the number of queries (~20 rows each)",
     "queries (log scale)", "rows per second (log scale)", lambda e: e.rate, "higher",
     fmt_tick, fmt_tick),
    ("kernel-length", "cost_per_row_vs_length.png",
     "Kernel cost per row against the length of a query's list (k=10)",
     "rows per query (log scale)", "nanoseconds per row (log scale)",
     lambda e: 1e9 / e.rate, "lower", fmt_plain, fmt_plain),
    ("kernel-k", "cost_vs_k.png", "Kernel cost per row against the cutoff (lists of 1,000 rows)",
     "k, the cutoff (log scale)", "nanoseconds per row (log scale)",
     lambda e: 1e9 / e.rate, "lower", fmt_plain, fmt_plain),
]
SHAPE_GROUPS = ("kernel-5rows", "kernel-10rows", "kernel-50rows", "kernel-1000rows",
                "evaluate-10rows", "evaluate-50rows", "list-sql-10rows", "list-sql-50rows",
                "qrels-int64", "qrels-string", "trec")
ROLE_STYLE = {  # colour, line, marker, what the role means (in the legends)
    "fastndcg": ("tab:blue", "-", "o", "fastndcg"),
    "bound": ("0.45", ":", "s", "bound: work fastndcg cannot avoid"),
    "peer": ("tab:orange", "--", "^", "peer: another tool, same work"),
}
PEER_COLOURS = ("tab:orange", "tab:red", "tab:purple", "tab:green", "tab:brown", "tab:pink")


def _log_axis(axis, fmt=fmt_tick) -> None:
    """Decades labelled 1, 10, 100, 1k ...; the ticks between them unlabelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(FuncFormatter(fmt))
    axis.set_minor_formatter(NullFormatter())


def plots(entries: list[Entry], out: str) -> tuple[list[str], str]:
    """PNG plots into ``out``; (file names, note)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return [], "matplotlib is not installed: no plots (pip install matplotlib)."
    written = []
    for name, fig in figures(entries):
        fig.savefig(os.path.join(out, name), dpi=110)
        plt.close(fig)
        written.append(name)
    return written, ""


def figures(entries: list[Entry]) -> list:
    """(file name, matplotlib Figure) of each plot the entries make: the sweeps (log
    axes, the decades labelled), and the shapes of real logs (bars, log axis)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    made = []
    for group, name, title, xlabel, ylabel, value, better, xfmt, yfmt in SWEEP_PLOTS:
        items = [e for e in in_group(entries, group) if e.rate]
        if not items:
            continue
        fig, ax = plt.subplots(figsize=(10, 5.2), layout="constrained")
        peers = iter(PEER_COLOURS)
        for system in dict.fromkeys(e.system for e in items):
            pts = sorted((case_key(e.case)[1], value(e)) for e in items if e.system == system)
            role = next(e.role for e in items if e.system == system)
            colour, line, marker, _ = ROLE_STYLE.get(role, ROLE_STYLE["peer"])
            if role not in ("fastndcg", "bound"):
                colour = next(peers, "tab:olive")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=line, marker=marker,
                    color=colour, lw=2.6 if role == "fastndcg" else 1.6,
                    ms=7 if role == "fastndcg" else 5.5,
                    label=system + (" (peer)" if role not in ("fastndcg", "bound") else ""),
                    zorder=3 if role == "fastndcg" else 2)
        ax.set_xscale("log")
        ax.set_yscale("log")
        _log_axis(ax.xaxis, xfmt)
        _log_axis(ax.yaxis, yfmt)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}: {better} is better", fontsize=11)
        ax.grid(True, which="major", alpha=0.35)
        ax.grid(True, which="minor", alpha=0.12)
        ax.legend(fontsize=8.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        made.append((name, fig))
    # the real-log shapes: rows/s of every system, one block of bars per shape
    shapes = [g for g in SHAPE_GROUPS if any(e.rate for e in in_group(entries, g))]
    if shapes:
        bars, heads, y = [], [], 0.0
        for g in shapes:
            heads.append((y, g))
            y += 1
            for e in sorted(in_group(entries, g), key=lambda e: -(e.rate or 0)):
                if e.rate:
                    bars.append((y, e))
                    y += 1
            y += 0.3
        fig, ax = plt.subplots(figsize=(11, 1.4 + 0.24 * y), layout="constrained")
        for yb, e in bars:
            colour = ROLE_STYLE.get(e.role, ROLE_STYLE["peer"])[0]
            ax.barh(yb, e.rate, height=0.72, color=colour, gid=e.role)
            ax.text(e.rate * 1.08, yb, fmt_rate(e.rate), va="center", fontsize=7.5,
                    color="0.2")
        ax.set_xscale("log")
        _log_axis(ax.xaxis)
        lo = min(e.rate for _, e in bars)
        ax.set_xlim(lo / 2, max(e.rate for _, e in bars) * 3)  # room for the values
        ax.set_ylim(y - 0.3, -1)
        ax.set_yticks([p for p, _ in bars], [e.label for _, e in bars], fontsize=7.5)
        ax.set_yticks([p for p, _ in heads], [g for _, g in heads], minor=True)
        for tick in ax.get_yticklabels(minor=True):
            tick.set_fontweight("bold")
            tick.set_fontsize(8.5)
        ax.tick_params(axis="y", which="minor", length=0)
        ax.set_xlabel("rows per second (log scale)")
        fig.suptitle("Rows per second on the shapes of real logs: longer is faster",
                     fontsize=11)
        ax.legend(handles=[Patch(color=c, label=lab) for c, _, _, lab in ROLE_STYLE.values()],
                  loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False,
                  fontsize=8.5, borderaxespad=0.3)
        ax.grid(True, axis="x", which="major", alpha=0.35)
        ax.grid(True, axis="x", which="minor", alpha=0.12)
        ax.set_axisbelow(True)
        made.append(("shapes.png", fig))
    return made


# --------------------------------------------------------------------------- render

def render(data: dict, entries: list[Entry], json_name: str, plot_files: list[str],
           notes: list[str], scale_link: str = "scale.md") -> str:
    """The report as Markdown; ``scale_link`` is docs/benchmarks/scale.md relative to it."""
    info = (data.get("machine_info") or {}).get("fastndcg_bench") or {}
    commit = data.get("commit_info") or {}
    full = info.get("full_sizes")
    m = info.get("machine") or {}
    lines = [
        "# fastndcg benchmarks",
        "",
        "Rendered by `scripts/bench_report.py` from the pytest-benchmark JSON of one run of "
        f"the suite (`{json_name}`); nothing here was timed by the script. To reproduce:",
        "",
        "```bash",
        "# 1. run the suite to JSON (full sizes; heavy cases left out)",
        RUN_COMMAND,
        "# 2. render this page (and the plots, with matplotlib)",
        RENDER_COMMAND,
        "```",
        "",
        f"Run of {data.get('datetime', '?')}"
        + (" at **full sizes** (`FASTNDCG_BENCH_FULL=1`)" if full else
           " at **quick sizes** (a smoke test: the targets below are indicative only)" if
           full is not None else "")
        + f"; commit {str(commit.get('id', '?'))[:10]}"
        + (" with uncommitted changes" if commit.get("dirty") else "")
        + (f", fastndcg from `{info['fastndcg_path']}`" if info.get("fastndcg_path") else "")
        + ". Each time is the best round (pytest-benchmark's `min`) after a warm-up call, so "
          "Numba compilation is never timed, except in the groups timed by their median round ("
          + ", ".join(f"`{g}`" for g in MEDIAN_GROUPS) + ": fresh processes, Spark, and the "
          "side-by-side groups of ranx's shape); rows/s = rows ÷ that time; every ratio "
          "compares benchmarks of this one run, medians with medians in those groups. Peers' "
          "answers were asserted "
          "equal to fastndcg's before they were timed.",
        "",
        "## Targets (kernel, logs, peers)",
        "",
    ]
    lines += target_table(log_targets(entries))
    lines += ["", "## Targets (comparing rankers)", ""]
    lines += target_table(compare_targets(entries))
    if any(e.group.startswith("spark") for e in entries):
        lines += ["", "## Targets (Spark)", ""]
        lines += target_table(spark_targets(entries))
    lines += ["", "## Other targets measured by the suite", ""]
    lines += target_table(design_targets(entries))
    lines += ["", "Peak memory at 30M queries and Dask scaling are measured by "
                  f"`python scripts/bench_scale.py` ([scale.md]({scale_link})).", ""]
    present = list(dict.fromkeys(e.group for e in entries))
    order = [g for g in GROUPS if g in present] + sorted(g for g in present if g not in GROUPS)
    lines += ["## Results by group", ""]
    for group in order:
        lines += [f"### `{group}`", ""]
        if group in GROUPS:
            lines += [GROUPS[group], ""]
        if group in SWEEPS:
            lines += sweep_table(entries, group)
        else:
            lines += group_table(entries, group)
        lines.append("")
    if plot_files:
        lines += ["## Plots", ""] + [f"![{p}]({p})" for p in plot_files] + [""]
    lines += ["## Machine and versions", ""]
    if m:
        lines.append(f"- machine: {m.get('cpus')} CPUs ({m.get('usable_cpus')} usable), "
                     f"{m.get('cpu_model')}, {m.get('memory')}; {m.get('system')}; Numba "
                     f"{m.get('numba_threads')} threads, threading layer "
                     f"{m.get('threading_layer')}")
    if info.get("load_start") is not None:
        load = ", ".join(f"{v:.2f}" for v in info["load_start"])
        end = ", ".join(f"{v:.2f}" for v in info.get("load_end") or [])
        lines.append(f"- load average (1, 5, 15 min): {load} at the start, {end} at the end "
                     f"(a shared machine: other work adds noise)")
    loads = sorted(e.extra["load_1m"] for e in entries if "load_1m" in e.extra)
    if loads:
        lines.append(f"- 1-minute load average as each benchmark started: {loads[0]:.2f} to "
                     f"{loads[-1]:.2f} (median {loads[len(loads) // 2]:.2f}) on "
                     f"{m.get('usable_cpus', '?')} usable CPUs; with other work running, "
                     f"Numba's parallel loops wait for their slowest thread, so short calls "
                     f"suffer most")
    if info.get("started"):
        lines.append(f"- suite started {info['started']}, finished {info.get('finished', '?')}")
    if info.get("versions"):
        lines.append(f"- versions: Python {info.get('python', '?')}, " + ", ".join(
            f"{k} {v}" for k, v in info["versions"].items()))
    if info.get("shapes"):
        s = info["shapes"]
        lines.append("- sizes: kernel queries by rows a query "
                     + ", ".join(f"~{r}: {n:,}" for r, n in s["kernel_queries"].items())
                     + "; Parquet logs " + ", ".join(f"~{r}: {n:,} queries"
                                                     for r, n in s["log_queries"].items())
                     + f"; qrels runs {s['qrels_queries']:,} queries × 100 documents")
    lines.append("")
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", default=DEFAULT_JSON,
                        help="pytest-benchmark JSON of one suite run (default %(default)s)")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help="folder for README.md and the plots (default %(default)s)")
    parser.add_argument("--no-plots", action="store_true", help="write no PNG files")
    parser.add_argument("--note", action="append", default=[],
                        help="a line for the report's notes (how the run was made); repeatable")
    args = parser.parse_args(argv)
    if not os.path.exists(args.json):
        print(f"bench_report: {args.json} does not exist; run the suite first:\n  "
              f"{RUN_COMMAND}", file=sys.stderr)
        return 2
    data, entries = load(args.json)
    if not entries:
        print(f"bench_report: {args.json} holds no timed benchmarks (was the suite run with "
              f"--benchmark-enable?)", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    notes: list[str] = list(args.note)
    plot_files: list[str] = []
    if not args.no_plots:
        plot_files, note = plots(entries, args.out)
        if note:
            notes.append(note)
    rel = os.path.relpath(args.json, REPO) if os.path.isabs(args.json) else args.json
    scale_link = os.path.relpath(os.path.join(DEFAULT_OUT, "scale.md"), args.out).replace(os.sep, "/")
    text = render(data, entries, rel, plot_files, notes, scale_link)
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {os.path.join(args.out, 'README.md')} and {len(plot_files)} plots",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
