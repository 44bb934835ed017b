#!/usr/bin/env python
"""Benchmark fastndcg against its peers at several sizes and write a report.

    python scripts/bench_report.py                  # full run (~10-15 min on 2 cores)
    python scripts/bench_report.py --quick          # small sizes (~2 min), a smoke test
    python scripts/bench_report.py --out DIR        # where the report goes (docs/benchmarks)

Every system answers on the same data, and its per-query values are asserted
equal to fastndcg's (to 1e-12) before anything is timed; every ratio is taken
within this one run. The systems (adapters in ``benchmarks/_peers.py``), all at
linear gain, one cutoff ``k`` per call:

* ``fastndcg.ndcg`` on the CSR batch (the kernel) and the Numba parallel sum over
  the same two arrays (the memory-bandwidth bound);
* ``fastndcg.reference`` (pure Python), against the kernel;
* scikit-learn ``ndcg_score``, tie-aware (tied scores) and ``ignore_ties=True``
  (tie-free scores), against ``fastndcg.ndcg_score`` on the same matrix;
* ranx from Python dicts (``Qrels/Run.from_dict`` + ``evaluate``: end to end)
  against ``fastndcg.evaluate`` from Arrow tables (its qrels join included), and
  ``ranx.evaluate`` alone against the kernel; tie-free scores, because ranx
  breaks ties by an unstable sort;
* pytrec_eval from TREC run/qrels files (``parse_qrel`` + ``parse_run`` +
  ``RelevanceEvaluator``) against ``fastndcg.evaluate`` from the same files with
  trec_eval's rules (``ties="trec"``).

Sweeps: queries 1e3 .. 1e6 (and 1e7 in the full run when the time and the
memory left allow it), 50 rows each, k=10; list length 10 .. 10,000 at a fixed
number of rows, k=10; k 1 .. 1,000 on lists of 1,000 rows. Slow systems run only
where their estimated time (from their cost per row at the previous size) fits
the per-point cap; the other points are reported as not run, never extrapolated.

Start-up, in fresh processes: ``import fastndcg`` alone; import + first result
with an empty compile cache (a new ``FASTNDCG_CACHE_DIR``); the same with that
cache present.

Writes ``README.md`` (markdown tables: throughput, speed-ups, targets, start-up,
machine, versions), ``results.json`` (the raw numbers) and PNG plots
(``throughput_vs_queries.png``, ``cost_per_row_vs_length.png``,
``cost_vs_k.png``) into ``--out``, and prints the markdown. A peer that is not
installed is skipped with a note; without matplotlib there are no plots.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (REPO, os.path.join(REPO, "scripts")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402

from bench_core import STARTUP_CODE  # noqa: E402  (import + first small result, as JSON)
from benchmarks import _data, _peers  # noqa: E402
from benchmarks._report import best_of, fmt_time, machine_facts, met, version  # noqa: E402

# --------------------------------------------------------------------------- plan

FULL = {"queries": [1_000, 10_000, 100_000, 1_000_000], "big_queries": 10_000_000,
        "rows_per_query": 50, "k": 10,
        "length_rows": 1_000_000, "lengths": [10, 100, 1_000, 10_000],
        "k_rows": 1_000_000, "k_length": 1_000, "ks": [1, 10, 100, 1_000],
        "group_cap_s": 90.0, "budget_s": 13 * 60.0, "rep_budget_s": 2.0,
        "max_reps": 5}
QUICK = {"queries": [1_000, 10_000, 100_000], "big_queries": None,
         "rows_per_query": 50, "k": 10,
         "length_rows": 100_000, "lengths": [10, 100, 1_000, 10_000],
         "k_rows": 100_000, "k_length": 1_000, "ks": [1, 10, 100, 1_000],
         "group_cap_s": 6.0, "budget_s": 105.0, "rep_budget_s": 0.3,
         "max_reps": 3}

# system key -> label; the fastndcg side of each comparison first
LABELS = {
    "kernel": "fastndcg.ndcg",
    "probe": "Numba parallel sum (bandwidth bound)",
    "reference": "fastndcg.reference",
    "fd_score": "fastndcg.ndcg_score",
    "sk": "scikit-learn ndcg_score",
    "fd_score_nt": "fastndcg.ndcg_score(ignore_ties=True) †",
    "sk_nt": "scikit-learn ndcg_score(ignore_ties=True) †",
    "kernel_tf": "fastndcg.ndcg †",
    "ranx_eval": "ranx.evaluate alone †",
    "fd_tables": "fastndcg.evaluate(run, qrels) from Arrow tables †",
    "ranx_e2e": "ranx Qrels/Run.from_dict + evaluate †",
    "fd_trec": "fastndcg.evaluate from TREC files (ties='trec')",
    "pytrec": "pytrec_eval parse + RelevanceEvaluator",
}
FASTNDCG_SIDE = {"kernel", "probe", "fd_score", "fd_score_nt", "kernel_tf", "fd_tables", "fd_trec"}
# (fastndcg side, peer, what, target speed-up or None)
PAIRS = [
    ("kernel", "reference", "fastndcg.ndcg vs fastndcg.reference", 300.0),
    ("fd_score", "sk", "fastndcg.ndcg_score vs scikit-learn, tie-aware", 100.0),
    ("fd_score_nt", "sk_nt", "ndcg_score(ignore_ties=True) vs scikit-learn †", None),
    ("fd_tables", "ranx_e2e", "fastndcg.evaluate (tables) vs ranx end to end †", 30.0),
    ("kernel_tf", "ranx_eval", "fastndcg.ndcg vs ranx.evaluate alone †", None),
    ("fd_trec", "pytrec", "fastndcg.evaluate vs pytrec_eval, TREC files end to end", 30.0),
]
TARGET_BANDWIDTH = 0.10
TARGET_FLAT = 2.0
TARGET_STARTUP_S = 1.0
# the peer each group needs ("" = none); a group runs or is skipped as a whole
GROUP_PEER = {"reference": "", "sklearn": "sklearn", "sklearn_nt": "sklearn", "ranx": "ranx",
              "pytrec": "pytrec_eval"}
GROUP_OF = {"reference": "reference", "fd_score": "sklearn", "sk": "sklearn",
            "fd_score_nt": "sklearn_nt", "sk_nt": "sklearn_nt", "kernel_tf": "ranx",
            "ranx_eval": "ranx", "fd_tables": "ranx", "ranx_e2e": "ranx", "fd_trec": "pytrec",
            "pytrec": "pytrec"}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- records

@dataclass
class Point:
    """One system at one size: measured, not run, or failed."""

    sweep: str
    x: int
    system: str
    n_rows: int
    n_queries: int
    status: str = "measured"  # measured | not run | unavailable | failed | differs
    seconds: float | None = None
    repeats: int = 0
    note: str = ""

    @property
    def rows_per_s(self) -> float | None:
        return self.n_rows / self.seconds if self.seconds else None

    @property
    def ns_per_row(self) -> float | None:
        return self.seconds / self.n_rows * 1e9 if self.seconds else None

    def to_json(self) -> dict:
        out = asdict(self)
        out.update(rows_per_s=self.rows_per_s, ns_per_row=self.ns_per_row)
        return out


@dataclass
class Run:
    """State of one benchmark run: the plan, the clock, the points and the notes."""

    plan: dict
    quick: bool
    started: float = field(default_factory=time.perf_counter)
    points: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    group_cost: dict = field(default_factory=dict)  # group -> est. seconds per row, last point
    prep_seconds: dict = field(default_factory=dict)  # "sweep=x[ what]" -> data building, s
    failures: int = 0

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def get(self, sweep: str, x: int, system: str) -> Point | None:
        for p in self.points:
            if (p.sweep, p.x, p.system) == (sweep, x, system):
                return p
        return None

    def measured(self, sweep: str, system: str) -> list[Point]:
        return sorted((p for p in self.points if p.sweep == sweep and p.system == system
                       and p.status == "measured"), key=lambda p: p.x)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)


# --------------------------------------------------------------------------- timing

def timed(run: Run, sweep: str, x: int, key: str, runner, n_rows: int, n_queries: int,
          min_reps: int = 1) -> Point:
    """Time ``runner.call()`` (already called once: the warm-up / the check): at least
    ``min_reps`` calls, more while they fit ``rep_budget_s`` (at most ``max_reps``); the
    best."""
    best, spent, reps = float("inf"), 0.0, 0
    while True:
        t, _ = best_of(runner.call, 1)
        best, spent, reps = min(best, t), spent + t, reps + 1
        if reps >= run.plan["max_reps"] or (reps >= min_reps and spent + t > run.plan["rep_budget_s"]):
            break
    point = Point(sweep, x, key, n_rows, n_queries, seconds=best, repeats=reps)
    run.points.append(point)
    say(f"    {LABELS[key]:<55} {n_rows / best / 1e6:10.2f}M rows/s  ({fmt_time(best)}, "
        f"best of {reps})")
    return point


def skip(run: Run, sweep: str, x: int, keys, n_rows: int, n_queries: int, status: str,
         note: str) -> None:
    for key in keys:
        run.points.append(Point(sweep, x, key, n_rows, n_queries, status=status, note=note))


def run_group(run: Run, group: str, sweep: str, x: int, n_rows: int, n_queries: int, body
              ) -> None:
    """Run ``body()`` (check, then time, the group's systems) if its peer is installed
    and its estimated time fits the cap and the time left; else mark it not run."""
    keys = [k for k, g in GROUP_OF.items() if g == group]
    peer = GROUP_PEER[group]
    if peer:
        ok, reason = _peers.available(peer)
        if not ok:
            run.note(f"{peer}: skipped everywhere — {reason}")
            skip(run, sweep, x, keys, n_rows, n_queries, "unavailable", reason)
            return
    cost = run.group_cost.get(group)
    if cost is not None:  # what its last point cost, timed calls and data building only
        estimate = cost * n_rows
        left = run.plan["budget_s"] - run.elapsed()
        if estimate > run.plan["group_cap_s"] or estimate > left:
            limit = (f"per-point cap of {run.plan['group_cap_s']:.0f} s"
                     if estimate > run.plan["group_cap_s"] else f"{max(left, 0):.0f} s left")
            why = (f"estimated {estimate:,.0f} s (check + timing) from its cost per row at the "
                   f"previous size, over the {limit}")
            say(f"    {group}: not run ({why})")
            skip(run, sweep, x, keys, n_rows, n_queries, "not run", why)
            return
    prep_key = f"{sweep}={x} {group}"
    t0 = time.perf_counter()
    try:
        body(prep_key)
    except Exception as err:  # a broken peer is reported, never a crash
        # AssertionError: the answers differ, so no timing is reported for them
        differs = isinstance(err, AssertionError)
        run.failures += 1
        msg = f"answers differ: {err}" if differs else f"failed: {type(err).__name__}: {err}"
        say(f"    {group}: {msg}")
        run.note(f"**{group}** at {sweep}={x:,}: {msg[:400]}")
        done = {p.system for p in run.points if (p.sweep, p.x) == (sweep, x)}
        skip(run, sweep, x, [k for k in keys if k not in done], n_rows, n_queries,
             "differs" if differs else "failed", msg[:300])
        return
    finally:
        gc.collect()
        say(f"    ({group}: {time.perf_counter() - t0:.1f} s in all)")
    # the next size's estimate: a check call plus the minimum timed calls of each system,
    # and the data building, per row (the check calls here may have compiled code, so
    # the wall time of this point would overestimate the next one)
    seconds = run.prep_seconds.get(prep_key, 0.0)
    for key in keys:
        p = run.get(sweep, x, key)
        if p is not None and p.status == "measured":
            seconds += p.seconds * (1 + (3 if key in FASTNDCG_SIDE else 1))
    run.group_cost[group] = seconds / max(n_rows, 1)


# --------------------------------------------------------------------------- data

def write_trec_files(folder: str, scores, labels, offsets) -> tuple[str, str]:
    """The batch as a TREC run (``q<8 digits> Q0 d<row> rank score bench``, scores
    written as their shortest float32 text) and a qrels file judging every row with
    its label (``q.. 0 d<row> label``); returns (run path, qrels path)."""
    n_q, n_rows = len(offsets) - 1, len(scores)
    lengths = np.diff(offsets)
    query = pa.array(np.repeat(np.arange(n_q, dtype=np.int64), lengths))
    qid = pc.binary_join_element_wise("q", pc.utf8_lpad(pc.cast(query, pa.string()), 8, "0"), "")
    doc = pc.binary_join_element_wise("d", pc.cast(pa.array(np.arange(n_rows)), pa.string()), "")
    rank = np.arange(1, n_rows + 1, dtype=np.int64) - np.repeat(offsets[:-1], lengths)
    score = pa.array(np.asarray(scores, dtype=np.float32)).cast(pa.string())

    def constant(text: str) -> pa.Array:
        return pc.fill_null(pa.nulls(n_rows, pa.string()), text)

    run = pa.table({"qid": qid, "q0": constant("Q0"), "docno": doc, "rank": rank,
                    "score": score, "tag": constant("bench")})
    qrels = pa.table({"qid": qid, "iter": constant("0"), "docno": doc,
                      "rel": pa.array(np.asarray(labels, dtype=np.int64))})
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_path, qrels_path = os.path.join(folder, "bench.run"), os.path.join(folder, "bench.qrels")
    pacsv.write_csv(run, run_path, options)
    pacsv.write_csv(qrels, qrels_path, options)
    return run_path, qrels_path


def memory_available() -> int | None:
    """MemAvailable from /proc/meminfo in bytes (None where unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


# --------------------------------------------------------------------------- one point

def run_point(run: Run, sweep: str, x: int, n_q: int, length: int, k: int,
              peers: bool = True) -> None:
    """All systems on one size: ``n_q`` queries of ``length`` rows, cutoff ``k``."""
    n_rows = n_q * length
    # best_of runs gc.collect() before every call; with the peers' modules loaded that
    # takes ~0.1 s, so what is alive now moves out of the collector's sight (cyclic
    # garbage left by this point is collected first, and is then collected as usual)
    gc.collect()
    gc.freeze()
    say(f"  {sweep}={x:,}: {n_q:,} queries × {length:,} rows = {n_rows:,} rows, k={k} "
        f"[{run.elapsed():.0f} s]")
    t0 = time.perf_counter()
    scores, labels, offsets = _data.ragged(n_q, length, fixed=True)
    run.prep_seconds[f"{sweep}={x}"] = time.perf_counter() - t0
    ks = [k]

    kernel = _peers.fastndcg_kernel(scores, labels, offsets, ks)
    kernel.call()  # warm-up (compiles, or loads the cache, once)
    timed(run, sweep, x, "kernel", kernel, n_rows, n_q, min_reps=3)
    probe = _peers.bandwidth_probe(scores, labels)
    total = probe.call()
    expected = float(scores.sum(dtype=np.float64) + labels.sum(dtype=np.int64))
    assert abs(total - expected) <= 1e-9 * abs(expected), (total, expected)
    timed(run, sweep, x, "probe", probe, n_rows, n_q, min_reps=3)
    if not peers:
        return

    def reference(prep_key):
        ref = _peers.reference_kernel(scores, labels, offsets, ks)
        _peers.check(kernel, ref)
        timed(run, sweep, x, "reference", ref, n_rows, n_q)

    def sklearn(ignore_ties: bool, s, l, o):
        def body(prep_key):
            y_true, y_score = _data.as_dense(s, l, o)
            ours = _peers.fastndcg_dense(y_true, y_score, ks, ignore_ties=ignore_ties)
            theirs = _peers.sklearn_dense(y_true, y_score, ks, ignore_ties=ignore_ties)
            _peers.check(ours, theirs)
            mean_ours, mean_theirs = ours.call(), theirs.call()
            _peers.assert_same(np.array(mean_ours), np.array(mean_theirs),
                               what=f"{theirs.system} mean")
            timed(run, sweep, x, "fd_score_nt" if ignore_ties else "fd_score", ours, n_rows, n_q,
                  min_reps=3)
            timed(run, sweep, x, "sk_nt" if ignore_ties else "sk", theirs, n_rows, n_q)
        return body

    tie_free: list = []

    def tie_free_batch(prep_key):
        t1 = time.perf_counter()
        if not tie_free:
            tie_free.extend(_data.ragged(n_q, length, fixed=True, tie_free=True))
        run.prep_seconds[prep_key] = time.perf_counter() - t1
        return tie_free

    def sklearn_nt(prep_key):
        sklearn(True, *tie_free_batch(prep_key))(prep_key)

    def ranx(prep_key):
        s, l, o = tie_free_batch(prep_key)
        t1 = time.perf_counter()
        data = _peers.qrels_run(s, l, o)
        run.prep_seconds[prep_key] += time.perf_counter() - t1
        kernel_tf = _peers.fastndcg_kernel(s, l, o, ks)
        kernel_tf.call()
        for key, runner in (("ranx_eval", _peers.ranx_evaluate(data, ks)),
                            ("ranx_e2e", _peers.ranx_end_to_end(data, ks)),
                            ("fd_tables", _peers.fastndcg_qrels(data, ks))):
            _peers.check(kernel_tf, runner)
            if key == "ranx_eval":
                timed(run, sweep, x, "kernel_tf", kernel_tf, n_rows, n_q, min_reps=3)
            timed(run, sweep, x, key, runner, n_rows, n_q,
                  min_reps=3 if key in FASTNDCG_SIDE else 1)

    def pytrec(prep_key):
        folder = tempfile.mkdtemp(prefix="fastndcg-report-trec-")
        try:
            t1 = time.perf_counter()
            run_file, qrels_file = write_trec_files(folder, scores, labels, offsets)
            run.prep_seconds[prep_key] = time.perf_counter() - t1
            ours = _peers.fastndcg_trec_files(run_file, qrels_file, ks)
            theirs = _peers.pytrec_eval_files(run_file, qrels_file, ks)
            _peers.check(ours, theirs)
            timed(run, sweep, x, "fd_trec", ours, n_rows, n_q, min_reps=3)
            timed(run, sweep, x, "pytrec", theirs, n_rows, n_q)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    run_group(run, "reference", sweep, x, n_rows, n_q, reference)
    run_group(run, "sklearn", sweep, x, n_rows, n_q, sklearn(False, scores, labels, offsets))
    run_group(run, "sklearn_nt", sweep, x, n_rows, n_q, sklearn_nt)
    run_group(run, "ranx", sweep, x, n_rows, n_q, ranx)
    run_group(run, "pytrec", sweep, x, n_rows, n_q, pytrec)


def big_point(run: Run) -> None:
    """The 1e7-query point (kernel and bandwidth probe only), if time and memory allow."""
    n_q = run.plan["big_queries"]
    if not n_q:
        run.note("1e7 queries: not run (--quick).")
        return
    length, k = run.plan["rows_per_query"], run.plan["k"]
    n_rows = n_q * length
    prev = max(run.plan["queries"])
    kernel, probe = run.get("queries", prev, "kernel"), run.get("queries", prev, "probe")
    scale = n_rows / kernel.n_rows
    prep = run.prep_seconds.get(f"queries={prev}", 1.0)
    # data + warm-up + >= 3 timed calls of each, scaled from the previous size
    estimate = scale * (prep + 4 * kernel.seconds + 4 * probe.seconds) * 1.3
    need = n_rows * (4 + 1) * 3 + n_q * 8 * 4  # arrays, generation temporaries, offsets, output
    avail = memory_available()
    left = run.plan["budget_s"] + 60 - run.elapsed()
    why = None
    if avail is not None and need > 0.8 * avail:
        why = (f"needs ~{need / 2**30:.1f} GiB, {avail / 2**30:.1f} GiB available")
    elif estimate > left:
        why = f"estimated {estimate:,.0f} s, {max(left, 0):,.0f} s of the time budget left"
    if why:
        say(f"  queries={n_q:,}: not run ({why})")
        skip(run, "queries", n_q, ["kernel", "probe"], n_rows, n_q, "not run", why)
        run.note(f"{n_q:,} queries ({n_rows / 1e6:,.0f}M rows): not run — {why}.")
        return
    run_point(run, "queries", n_q, n_q, length, k, peers=False)
    # the peers' groups: never attempted at this size (memory and time); what they
    # would cost by their last point's cost per row, so the report says why
    estimates = []
    for group in GROUP_PEER:
        keys = [key for key, g in GROUP_OF.items() if g == group]
        cost = run.group_cost.get(group)
        why = ("kernel and bandwidth probe only at this size" if cost is None else
               f"kernel and bandwidth probe only at this size; estimated {cost * n_rows:,.0f} s")
        if cost is not None:
            estimates.append(f"{group} ~{cost * n_rows:,.0f} s")
        skip(run, "queries", n_q, keys, n_rows, n_q, "not run", why)
    run.note(f"{n_q:,} queries ({n_rows / 1e6:,.0f}M rows): fastndcg.ndcg and the bandwidth "
             f"probe only (the tie-free copy, the dicts and the TREC files of "
             f"{n_rows / 1e6:,.0f}M rows would not fit the time); the other groups' estimated "
             f"times there (check + timing, from their last cost per row; per-point cap "
             f"{run.plan['group_cap_s']:.0f} s): {', '.join(estimates)}.")


# --------------------------------------------------------------------------- start-up

IMPORT_CODE = ("import json, time\nt0 = time.perf_counter()\nimport fastndcg\n"
               "print(json.dumps({'import_s': time.perf_counter() - t0}))\n")


def child(code: str, env: dict) -> dict:
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, env=env)
    wall = time.perf_counter() - t0
    if out.returncode:
        raise RuntimeError(f"start-up child failed ({out.returncode}): {out.stderr[-500:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall_s"] = wall
    return result


def startup(repeat: int = 3) -> dict:
    """Fresh processes: import alone (best of ``repeat``); import + first result with an
    empty ``FASTNDCG_CACHE_DIR`` (once: it fills the cache); the same again with the
    cache present (best of ``repeat``)."""
    folder = tempfile.mkdtemp(prefix="fastndcg-report-cache-")
    env = dict(os.environ, FASTNDCG_CACHE_DIR=folder)
    env.pop("FASTNDCG_CACHE", None)
    try:
        say("start-up: import alone ...")
        imports = [child(IMPORT_CODE, env) for _ in range(repeat)]
        say("start-up: first result, empty compile cache (compiles the kernels) ...")
        cold = child(STARTUP_CODE, env)
        cache_files = sum(len(files) for _, _, files in os.walk(folder))
        say("start-up: first result, cache present ...")
        warm = [child(STARTUP_CODE, env) for _ in range(repeat)]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    best_warm = min(warm, key=lambda r: r["import_s"] + r["first_call_s"])
    return {"import_only": min(imports, key=lambda r: r["import_s"]), "cold": cold,
            "warm": best_warm, "repeat": repeat, "cache_files": cache_files,
            "first_call": "fastndcg.ndcg([0.9, 0.3, 0.3, 0.8, 0.1], [2, 0, 1, 1, 0], "
                          "[0, 3, 5], k=[1, 3])"}


# --------------------------------------------------------------------------- analysis

def ratio_series(run: Run, sweep: str, fast: str, slow: str) -> list[tuple[int, float]]:
    """(x, slow time / fast time) where both were measured."""
    out = []
    for p in run.measured(sweep, fast):
        q = run.get(sweep, p.x, slow)
        if q is not None and q.status == "measured":
            out.append((p.x, q.seconds / p.seconds))
    return out


def bandwidth_series(run: Run, sweep: str) -> list[tuple[int, float]]:
    """(x, kernel rows/s / probe rows/s)."""
    return ratio_series(run, sweep, "kernel", "probe")  # probe time ÷ kernel time


def fmt_ratio(value: float) -> str:
    return f"{value:,.0f}×" if value >= 10 else f"{value:.1f}×"


def fmt_rate(rows_per_s: float) -> str:
    if rows_per_s >= 1e9:
        return f"{rows_per_s / 1e9:.2f}G"
    if rows_per_s >= 1e6:
        return f"{rows_per_s / 1e6:.1f}M"
    return f"{rows_per_s / 1e3:.0f}k"


def fmt_count(n: int) -> str:
    """1000 -> "1k", 10_000_000 -> "10M"."""
    for size, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= size and n % size == 0:
            return f"{n // size}{suffix}"
    return f"{n:,}"


def fmt_ns(ns: float) -> str:
    return f"{ns / 1e3:,.1f} µs" if ns >= 1e4 else f"{ns:,.1f} ns"


def ns(run: Run, sweep: str, x: int, system: str) -> float | None:
    p = run.get(sweep, x, system)
    return p.ns_per_row if p is not None and p.status == "measured" else None


def targets(run: Run, startup_result: dict) -> list[dict]:
    """The targets table: what, measured, target, met (True/False/None), why (if missed)."""
    rows = []
    sweep = "queries"

    def last(series):
        return series[-1] if series else None

    def spread(series, fmt):
        if len(series) < 2:
            return ""
        lo, hi = min(v for _, v in series), max(v for _, v in series)
        return f"; {fmt(lo)}–{fmt(hi)} over {series[0][0]:,}–{series[-1][0]:,} queries"

    for fast, slow, what, target in PAIRS:
        if target is None:
            continue
        series = ratio_series(run, sweep, fast, slow)
        point = last(series)
        row = {"what": what + " (same data, per-query answers equal)",
               "target": f"≥ {target:.0f}×"}
        if point is None:
            statuses = {p.status for p in run.points if p.system == slow}
            row.update(measured="not measured (" + ", ".join(sorted(statuses) or ["no data"]) +
                       ")", met=None, why="")
            rows.append(row)
            continue
        x, value = point
        row.update(measured=f"{fmt_ratio(value)} at {x:,} queries{spread(series, fmt_ratio)}",
                   met=value >= target, value=value, x=x)
        row["why"] = "" if row["met"] else why_missed(run, sweep, x, fast, slow, target)
        rows.append(row)

    series = bandwidth_series(run, sweep)
    if series:
        x, value = series[-1]
        row = {"what": "fastndcg.ndcg rows/s ÷ Numba parallel sum rows/s, same arrays",
               "target": f"≥ {TARGET_BANDWIDTH:.2f}", "value": value, "x": x,
               "measured": f"{value:.3f} at {x:,} queries{spread(series, lambda v: f'{v:.3f}')}",
               "met": value >= TARGET_BANDWIDTH}
        k_ns, p_ns = ns(run, sweep, x, "kernel"), ns(run, sweep, x, "probe")
        row["why"] = "" if row["met"] else (
            f"the kernel spends {k_ns:.1f} ns a row where reading the two arrays takes "
            f"{p_ns:.2f} ns: per-query selection and DCG work, not memory traffic, bound it")
        rows.append(row)

    flat = [(p.x, p.ns_per_row) for p in run.measured(sweep, "kernel") if p.x >= 10_000]
    if len(flat) >= 2:
        worst, best = max(flat, key=lambda t: t[1]), min(flat, key=lambda t: t[1])
        value = worst[1] / best[1]
        row = {"what": f"fastndcg.ndcg cost per row, {flat[0][0]:,} to {flat[-1][0]:,} queries "
                       f"(max ÷ min)",
               "target": f"≤ {TARGET_FLAT:.0f}× (1e4 to 1e7 queries)", "value": value,
               "measured": f"{value:.2f}× (" + ", ".join(f"{fmt_ns(v)} at {fmt_count(x)}"
                                                          for x, v in flat) + ")",
               "met": value <= TARGET_FLAT}
        if flat[-1][0] < 10_000_000:
            row["measured"] += " — 1e7 not run"
        worst_p = run.get(sweep, worst[0], "kernel")
        fixed = worst_p.seconds - worst_p.n_rows * best[1] * 1e-9
        row["why"] = "" if row["met"] else (
            f"at {worst[0]:,} queries the call takes {fmt_time(worst_p.seconds)}, "
            f"{fmt_time(max(fixed, 0))} more than {fmt_ns(best[1])}/row predicts: "
            f"a fixed cost per call that a batch of {worst_p.n_rows:,} rows does not amortise")
        rows.append(row)

    total = startup_result["warm"]["import_s"] + startup_result["warm"]["first_call_s"]
    rows.append({"what": "new process, compile cache present: import + first result "
                         "(DESIGN.md)", "target": f"≤ {TARGET_STARTUP_S:.0f} s",
                 "measured": fmt_time(total), "value": total, "met": total <= TARGET_STARTUP_S,
                 "why": "" if total <= TARGET_STARTUP_S else
                 f"import alone takes {fmt_time(startup_result['warm']['import_s'])}"})
    return rows


def why_missed(run: Run, sweep: str, x: int, fast: str, slow: str, target: float) -> str:
    """One line from the data: what the target would need, and where the fastndcg
    side's time goes at ``x``."""
    f_ns, s_ns = ns(run, sweep, x, fast), ns(run, sweep, x, slow)
    k_ns = ns(run, sweep, x, "kernel_tf" if fast == "fd_tables" else "kernel")
    need = s_ns / target
    parts = [f"{LABELS[slow].rstrip(' †')} costs {fmt_ns(s_ns)}/row, "
             f"{LABELS[fast].rstrip(' †')} {fmt_ns(f_ns)}/row ({fmt_rate(1e9 / f_ns)} rows/s); "
             f"{target:.0f}× needs ≤ {fmt_ns(need)}/row ({fmt_rate(1e9 / need)} rows/s)"]
    if fast != "kernel" and k_ns is not None:
        outside = 1.0 - k_ns / f_ns
        if outside >= 0.1:
            parts.append(f"{outside:.0%} of it is outside the NDCG kernel, which takes "
                         f"{fmt_ns(k_ns)}/row on the same rows")
        else:
            parts.append(f"almost all of it is the NDCG kernel ({fmt_ns(k_ns)}/row on the "
                         f"same rows)")
    if slow == "ranx_e2e":
        e_ns = ns(run, sweep, x, "ranx_eval")
        if e_ns is not None:
            parts.append(f"ranx spends {1 - e_ns / s_ns:.0%} of its time building Qrels/Run")
    return "; ".join(parts)


# --------------------------------------------------------------------------- report

SWEEPS = [
    ("queries", "Throughput against the number of queries",
     "queries", "{rows_per_query} rows per query (fixed length), k={k}"),
    ("length", "Throughput against the list length",
     "rows per query", "{length_rows:,} rows in all (queries = rows ÷ length), k={k}"),
    ("k", "Throughput against the cutoff k",
     "k", "{k_rows:,} rows: {k_queries:,} queries × {k_length:,} rows"),
]


def sweep_systems(run: Run, sweep: str) -> list[str]:
    present = {p.system for p in run.points if p.sweep == sweep}
    return [key for key in LABELS if key in present]


def throughput_table(run: Run, sweep: str, column: str) -> list[str]:
    xs = sorted({p.x for p in run.points if p.sweep == sweep})
    lines = [f"| system \\ {column} | " + " | ".join(f"{x:,}" for x in xs) + " |",
             "|---|" + "---:|" * len(xs)]
    for key in sweep_systems(run, sweep):
        cells = []
        for x in xs:
            p = run.get(sweep, x, key)
            if p is None:
                cells.append("")
            elif p.status == "measured":
                cells.append(fmt_rate(p.rows_per_s))
            else:
                cells.append(p.status)
        lines.append(f"| {LABELS[key]} | " + " | ".join(cells) + " |")
    return lines


def speedup_table(run: Run, sweep: str, column: str) -> list[str]:
    xs = sorted({p.x for p in run.points if p.sweep == sweep})
    lines = [f"| comparison \\ {column} | " + " | ".join(f"{x:,}" for x in xs) + " |",
             "|---|" + "---:|" * len(xs)]
    bandwidth = dict(bandwidth_series(run, sweep))
    lines.append("| fastndcg.ndcg ÷ bandwidth bound (fraction) | " +
                 " | ".join(f"{bandwidth[x]:.3f}" if x in bandwidth else "—" for x in xs) + " |")
    for fast, slow, what, _ in PAIRS:
        values = dict(ratio_series(run, sweep, fast, slow))
        if not values and not any(p.system == slow and p.sweep == sweep for p in run.points):
            continue
        lines.append(f"| {what} | " + " | ".join(
            fmt_ratio(values[x]) if x in values else "—" for x in xs) + " |")
    return lines


def machine() -> dict:
    return {**machine_facts(), "python": platform.python_version()}


def load_average() -> str:
    return ", ".join(f"{v:.2f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "?"


def versions() -> dict:
    out = {"python": platform.python_version(), "numpy": np.__version__,
           "pyarrow": pa.__version__}
    out.update(_peers.versions())
    out["matplotlib"] = version("matplotlib")
    return out


def render(run: Run, result: dict) -> str:
    plan, m, start = run.plan, result["machine"], result["startup"]
    lines = [
        "# fastndcg benchmarks",
        "",
        f"Written by `python scripts/bench_report.py{' --quick' if run.quick else ''}` on "
        f"{result['date']} in {result['wall_s'] / 60:.1f} min"
        f"{' (--quick: small sizes, targets indicative only)' if run.quick else ''}. "
        "Every system scores the same seeded data (`benchmarks/_data.py`, adapters in "
        "`benchmarks/_peers.py`) at linear gain, and its per-query values were asserted "
        "equal to fastndcg's (to 1e-12) before it was timed; every ratio below comes from "
        f"this one run. Times are the best of up to {plan['max_reps']} calls (at least 3 for "
        "fastndcg and the "
        "bandwidth probe) after a warm-up call; Numba compilation is never timed. Throughput "
        "is judged rows per second.",
        "",
        "Data: float32 scores rounded to 2 decimals (ties inside every query), int8 labels "
        "0–4, all queries of a size equally long (so scikit-learn gets the same rows as a "
        "matrix). † marks tie-free data (each query's scores a permutation of 0..n−1), used "
        "where the peer breaks ties arbitrarily (ranx, `ignore_ties=True`); its fastndcg side "
        "runs on the same tie-free rows. ranx and `fastndcg.evaluate` get every row judged "
        "with its label, so qrels mode equals list mode; pytrec_eval and fastndcg read the "
        "same TREC files (run: `q.. Q0 d<row> rank score bench`, qrels: every row with its "
        "label) and use trec_eval's tie rule. \"not run\": the estimated time at that size "
        "(from the cost per row at the previous one) went over the per-point cap of "
        f"{plan['group_cap_s']:.0f} s or the time left; such points are not extrapolated.",
        "",
        "## Targets",
        "",
        "| what | measured | target | met? | why missed (from the data) |",
        "|---|---|---|---|---|",
    ]
    for row in result["targets"]:
        lines.append(f"| {row['what']} | {row['measured']} | {row['target']} | "
                     f"{met(row['met'])} | {row.get('why', '')} |")
    lines.append("")
    for sweep, title, column, describe in SWEEPS:
        if not any(p.sweep == sweep for p in run.points):
            continue
        desc = describe.format(k_queries=plan["k_rows"] // plan["k_length"], **plan)
        lines += [f"## {title}", "", f"{desc}. Rows per second:", ""]
        lines += throughput_table(run, sweep, column)
        lines += ["", "Speed-ups (peer time ÷ fastndcg time, same data, same run):", ""]
        lines += speedup_table(run, sweep, column)
        lines.append("")
    cold, warm, imp = start["cold"], start["warm"], start["import_only"]
    lines += [
        "## Start-up (fresh processes)",
        "",
        f"First result: `{start['first_call']}`; times measured inside the child; the wall "
        "column adds the interpreter's own start. Empty cache: a new `FASTNDCG_CACHE_DIR`, "
        f"so the first call compiles (it left {start['cache_files']} cache files); cache "
        f"present: the next processes with that directory (best of {start['repeat']}).",
        "",
        "| what | import | first result | import + first result | wall (process) |",
        "|---|---:|---:|---:|---:|",
        f"| `import fastndcg` alone | {fmt_time(imp['import_s'])} | — | — | "
        f"{fmt_time(imp['wall_s'])} |",
        f"| empty compile cache | {fmt_time(cold['import_s'])} | "
        f"{fmt_time(cold['first_call_s'])} | {fmt_time(cold['import_s'] + cold['first_call_s'])}"
        f" | {fmt_time(cold['wall_s'])} |",
        f"| compile cache present | {fmt_time(warm['import_s'])} | "
        f"{fmt_time(warm['first_call_s'])} | {fmt_time(warm['import_s'] + warm['first_call_s'])}"
        f" | {fmt_time(warm['wall_s'])} |",
        "",
    ]
    if result["plots"]:
        lines += ["## Plots", ""] + [f"![{name}]({name})" for name in result["plots"]] + [""]
    lines += [
        "## Machine and versions",
        "",
        f"- machine: {m['cpus']} CPUs ({m['usable_cpus']} usable), {m['cpu_model']}, "
        f"{m['memory']}; {m['system']}",
        f"- load average (1, 5, 15 min): {result['load_start']} at the start, "
        f"{result['load_end']} at the end (a shared machine: other work adds noise)",
        f"- Numba: {m['numba_threads']} threads, threading layer {m['threading_layer']}",
        "- versions: " + ", ".join(f"{name} {v}" for name, v in result["versions"].items()),
        "",
    ]
    if run.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in run.notes] + [""]
    return "\n".join(lines)


def plot(run: Run, out: str) -> list[str]:
    """The PNG plots; [] (and a note) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        run.note("matplotlib is not installed: no plots (pip install matplotlib).")
        return []
    figures = [("queries", "throughput_vs_queries.png", "number of queries", "rows/s",
                lambda p: p.rows_per_s, f"{run.plan['rows_per_query']} rows per query, "
                                        f"k={run.plan['k']}"),
               ("length", "cost_per_row_vs_length.png", "list length (rows per query)",
                "ns per row", lambda p: p.ns_per_row,
                f"{run.plan['length_rows']:,} rows in all, k={run.plan['k']}"),
               ("k", "cost_vs_k.png", "k (cutoff)", "ns per row", lambda p: p.ns_per_row,
                f"{run.plan['k_rows']:,} rows, lists of {run.plan['k_length']:,}")]
    colours = plt.get_cmap("tab20").colors
    style = {key: (colours[i % len(colours)], "os^vDPX*<>phd"[i % 13])
             for i, key in enumerate(LABELS)}
    written = []
    for sweep, name, xlabel, ylabel, value, subtitle in figures:
        systems = [key for key in sweep_systems(run, sweep) if run.measured(sweep, key)]
        if not systems:
            continue
        fig, ax = plt.subplots(figsize=(12, 6))
        for key in systems:
            pts = run.measured(sweep, key)
            colour, marker = style[key]
            ax.plot([p.x for p in pts], [value(p) for p in pts],
                    "-" if key in FASTNDCG_SIDE else "--", color=colour, marker=marker,
                    label=LABELS[key])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(f"{ylabel} against {xlabel} ({subtitle}; † tie-free data)", fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        fig.tight_layout()
        fig.savefig(os.path.join(out, name), dpi=110)
        plt.close(fig)
        written.append(name)
    return written


# --------------------------------------------------------------------------- main

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (about 2 minutes); targets are indicative only")
    parser.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks"),
                        help="folder for README.md, results.json and the plots "
                             "(default %(default)s)")
    args = parser.parse_args(argv)
    run = Run(dict(QUICK if args.quick else FULL), args.quick)
    plan = run.plan
    os.makedirs(args.out, exist_ok=True)
    load_start = load_average()
    for peer in _peers.PEERS:
        ok, reason = _peers.available(peer)
        if not ok:
            run.note(f"{peer}: skipped everywhere — {reason}")

    start = startup()
    say("sweep over the number of queries ...")
    for n_q in plan["queries"]:
        run_point(run, "queries", n_q, n_q, plan["rows_per_query"], plan["k"])
    say("sweep over the list length ...")
    for length in plan["lengths"]:
        run_point(run, "length", length, plan["length_rows"] // length, length, plan["k"])
    say("sweep over k ...")
    for k in plan["ks"]:
        run_point(run, "k", k, plan["k_rows"] // plan["k_length"], plan["k_length"], k)
    big_point(run)

    result = {"date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
              "quick": run.quick, "plan": plan, "machine": machine(), "versions": versions(),
              "load_start": load_start, "startup": start}
    result["targets"] = targets(run, start)
    result["plots"] = plot(run, args.out)
    result["load_end"] = load_average()
    result["wall_s"] = run.elapsed()
    text = render(run, result)
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write(text)
    result.update(points=[p.to_json() for p in run.points], notes=run.notes,
                  prep_seconds=run.prep_seconds, labels=LABELS)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1, default=float)
    print(text)
    say(f"wrote {args.out}/README.md, results.json and {len(result['plots'])} plots in "
        f"{run.elapsed():.0f} s")
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
