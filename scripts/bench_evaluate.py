#!/usr/bin/env python
"""Measure ``fastndcg evaluate`` end to end against its targets, in one run.

    python scripts/bench_evaluate.py            # full sizes (50M- and 200M-row logs)
    python scripts/bench_evaluate.py --quick    # small sizes, for a smoke test

What is measured:

1. ``fastndcg evaluate LOG.parquet -k 1,3,5,10 --quiet --format json`` as a
   subprocess on a 50M-row log (1,000,000 queries; query_id int64, doc_id int64,
   score float32, label int8; row groups of 1,048,576 rows), best of 3 wall-clock
   times after a warm-up run -> rows/s end to end, process start included; and
   ``fastndcg.evaluate(path)`` in this process, best of 3 after a warm-up call.
   Target >= 40M rows/s.
2. Peak resident memory of ``fastndcg evaluate`` on a 200M-row log of the same
   shape (4,000,000 queries; skipped when the disk has under 5 GB free), on the
   50M-row log and on a 1,000-query log (the interpreter and its libraries), to
   show memory does not grow with the file. Target <= 1 GiB. The peak is
   ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` taken by a small intermediate
   interpreter that runs the command (see ``RSS_PROBE`` for why not from here).
3. Qrels mode from TREC text files, 20,000 queries x 100 documents, tied scores,
   graded judgments: ``fastndcg.evaluate(run, qrels=..., gain="linear",
   ties="trec", k=[1, 3, 5, 10])`` against pytrec_eval (``parse_qrel`` +
   ``parse_run`` + ``RelevanceEvaluator({"ndcg_cut.1,3,5,10"}).evaluate``), both
   from the files, best of 3 each, after asserting equal per-query values to
   1e-12. Target speed-up >= 30x.

The logs are written once with ``fastndcg.synth.write_synthetic_log`` into a cache
folder (``--cache-dir``, default /tmp/fastndcg-bench; about 300 MB and 1.2 GB) and
reused while their schema and last query id match. Ratios are taken within this
one run, because timings on a shared machine drift between runs. Prints a markdown
table (what | measured | target | met?), the machine and the library versions.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

import numba  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import fastndcg  # noqa: E402
from benchmarks.test_bench_evaluate import (K, assert_same_as_pytrec, fastndcg_trec,  # noqa: E402
                                            have_pytrec_eval, pytrec_end_to_end,
                                            write_trec_files)
from benchmarks._report import (best_of, cpu_model, fmt_time, met, print_table,  # noqa: E402
                                threading_layer, total_memory, version)
from fastndcg.synth import SCHEMA, write_synthetic_log  # noqa: E402

TARGET_ROWS_PER_S = 40e6
TARGET_PEAK_RSS = 1 << 30
TARGET_SPEEDUP = 30.0
MIN_FREE_DISK = 5e9

FULL = {"log_queries": 1_000_000, "big_queries": 4_000_000, "trec_queries": 20_000,
        "trec_docs": 100, "row_group_rows": 1 << 20}
QUICK = {"log_queries": 20_000, "big_queries": 80_000, "trec_queries": 500,
         "trec_docs": 100, "row_group_rows": 1 << 17}
BASELINE_QUERIES = 1_000


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- helpers

def fmt_bytes(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:,.0f} MiB"


def cli_command() -> tuple[list[str], str]:
    """The installed ``fastndcg`` script beside this interpreter, else ``python -m``."""
    folder = os.path.dirname(sys.executable)
    for name in ("fastndcg", "fastndcg.exe"):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return [path], "fastndcg"
    return [sys.executable, "-m", "fastndcg"], "python -m fastndcg"


def run_timed(cmd: list[str]) -> tuple[float, str]:
    """Run ``cmd``; (wall seconds, process start included, stdout)."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr}")
    return wall, proc.stdout


# Runs the command as its own child and reports that child's peak RSS. A child forked
# straight from this (large) process would not do: Linux folds the RSS of the memory
# image that exec replaces (here a copy of, or with vfork this very, process) into the
# child's ru_maxrss. This small interpreter (-I -S: no site imports, ~10 MB) is the
# one that forks, so what it reports is the command's own peak.
RSS_PROBE = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.call(sys.argv[1:])\n"
    "sys.stderr.write('\\nmaxrss=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(rc)\n")


def run_peak_rss(cmd: list[str]) -> tuple[int | None, float, str]:
    """Run ``cmd``; (its peak resident memory in bytes or None, wall seconds, stdout)."""
    if importlib.util.find_spec("resource") is None:  # not POSIX
        wall, out = run_timed(cmd)
        return None, wall, out
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", RSS_PROBE, *cmd],
                          capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr}")
    marker = proc.stderr.rstrip().rsplit("\n", 1)[-1]
    assert marker.startswith("maxrss="), proc.stderr
    scale = 1 if sys.platform == "darwin" else 1024  # macOS: bytes; Linux: KiB
    return int(marker.split("=")[1]) * scale, wall, proc.stdout


def cached_log(cache_dir: str, n_queries: int, row_group_rows: int, seed: int = 0,
               mean_docs: int | None = None) -> tuple[str, int]:
    """(path, rows) of the synthetic log, written into ``cache_dir`` unless present;
    ``mean_docs`` None is the synthetic log's default list length."""
    shape = "" if mean_docs is None else f"-md{mean_docs}"
    path = os.path.join(cache_dir, f"synth-{n_queries}q{shape}-seed{seed}"
                                   f"-rg{row_group_rows}.parquet")
    if os.path.exists(path):
        try:
            meta = pq.ParquetFile(path).metadata
            last = meta.row_group(meta.num_row_groups - 1).column(0).statistics
            if (meta.schema.to_arrow_schema().remove_metadata().equals(SCHEMA)
                    and last is not None and last.has_min_max and last.max == n_queries - 1
                    and meta.row_group(0).num_rows == min(row_group_rows, meta.num_rows)):
                say(f"reusing {path} ({meta.num_rows:,} rows)")
                return path, meta.num_rows
        except (OSError, pa.ArrowException, IndexError):
            pass
        say(f"{path} is not the expected log; writing it again")
    os.makedirs(cache_dir, exist_ok=True)
    say(f"writing {path}: {n_queries:,} queries"
        f"{'' if mean_docs is None else f' of ~{mean_docs} rows'} ...")
    tmp = f"{path}.tmp-{os.getpid()}"
    t0 = time.perf_counter()
    try:
        extra = {} if mean_docs is None else {"mean_docs": mean_docs}
        rows = write_synthetic_log(tmp, n_queries, seed=seed, row_group_rows=row_group_rows,
                                   **extra)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    say(f"  {rows:,} rows, {os.path.getsize(path) / 2**20:,.0f} MiB in "
        f"{time.perf_counter() - t0:.1f} s")
    return path, rows


def check_json(stdout: str, n_rows: int, mean: dict | None = None) -> dict:
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out["n_rows"] == n_rows, (out["n_rows"], n_rows)
    if mean is not None:
        for name, value in mean.items():
            assert abs(out[name] - value) <= 1e-12, (name, out[name], value)
    return out


# --------------------------------------------------------------------------- main

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes (20,000 / 80,000 queries, 500 TREC queries); "
                             "targets are then indicative only")
    parser.add_argument("--cache-dir", default=os.path.join(tempfile.gettempdir(),
                                                            "fastndcg-bench"),
                        help="where the synthetic logs are kept (default %(default)s)")
    args = parser.parse_args(argv)
    size = QUICK if args.quick else FULL
    cli, cli_name = cli_command()
    ks = ",".join(map(str, K))
    rows: list[tuple[str, str, str, str]] = []
    rss: list[tuple[str, int, int | None]] = []  # (log, rows, peak bytes)

    def evaluate_cmd(path: str) -> list[str]:
        return [*cli, "evaluate", path, "-k", ks, "--quiet", "--format", "json"]

    # 1. the 50M-row log: command line and in-process ------------------------------
    path, n_rows = cached_log(args.cache_dir, size["log_queries"], size["row_group_rows"])
    say("warming up (a first run may compile the Numba kernels) ...")
    first_wall, out = run_timed(evaluate_cmd(path))
    report = fastndcg.evaluate(path, k=K)
    assert report.n_rows == n_rows and report.n_queries == size["log_queries"]
    check_json(out, n_rows, report.mean)
    say(f"timing `{cli_name} evaluate` (best of 3) ...")
    best_cli = float("inf")
    for _ in range(3):
        wall, out = run_timed(evaluate_cmd(path))
        check_json(out, n_rows, report.mean)
        best_cli = min(best_cli, wall)
    say("timing fastndcg.evaluate in this process (best of 3) ...")
    t_api, report2 = best_of(fastndcg.evaluate, 3, path, k=K)
    assert report2.n_rows == n_rows and report2.mean == report.mean
    cli_rate, api_rate = n_rows / best_cli, n_rows / t_api
    label = f"{size['log_queries']:,} queries / {n_rows / 1e6:.1f}M rows"
    rows.append((f"`{cli_name} evaluate LOG -k {ks} --quiet --format json`, {label}, "
                 f"subprocess wall clock incl. start-up (best of 3)",
                 f"{cli_rate / 1e6:,.1f}M rows/s ({fmt_time(best_cli)})",
                 f"≥ {TARGET_ROWS_PER_S / 1e6:.0f}M rows/s", met(cli_rate >= TARGET_ROWS_PER_S)))
    rows.append(("`fastndcg.evaluate(path)` in-process, same log (best of 3)",
                 f"{api_rate / 1e6:,.1f}M rows/s ({fmt_time(t_api)})",
                 f"≥ {TARGET_ROWS_PER_S / 1e6:.0f}M rows/s", met(api_rate >= TARGET_ROWS_PER_S)))
    mean = report.mean
    del report, report2
    gc.collect()

    # 2. peak memory: a tiny log, the 50M-row log, the 200M-row log ---------------------
    say("peak memory of the command line ...")
    tiny, tiny_rows = cached_log(args.cache_dir, BASELINE_QUERIES, size["row_group_rows"])
    peak, _, out = run_peak_rss(evaluate_cmd(tiny))
    check_json(out, tiny_rows)
    if peak is not None:
        rss.append((f"{BASELINE_QUERIES:,} queries / {tiny_rows / 1e3:.0f}k rows "
                    f"(interpreter + libraries)", tiny_rows, peak))
    peak, _, out = run_peak_rss(evaluate_cmd(path))
    check_json(out, n_rows, mean)
    if peak is not None:
        rss.append((label, n_rows, peak))
    big_name = f"{size['big_queries']:,} queries"
    big_rate = None
    big_file = os.path.join(args.cache_dir, f"synth-{size['big_queries']}q-seed0-"
                                            f"rg{size['row_group_rows']}.parquet")
    os.makedirs(args.cache_dir, exist_ok=True)
    free = shutil.disk_usage(args.cache_dir).free
    if not os.path.exists(big_file) and free < MIN_FREE_DISK:
        say(f"skipping the {big_name} log: {free / 1e9:.1f} GB free in {args.cache_dir}, "
            f"under {MIN_FREE_DISK / 1e9:.0f} GB")
        rows.append((f"peak RSS, {big_name} log", f"skipped: {free / 1e9:.1f} GB free disk "
                     f"(< {MIN_FREE_DISK / 1e9:.0f} GB)", f"≤ {fmt_bytes(TARGET_PEAK_RSS)}",
                     met(None)))
    else:
        big, big_rows = cached_log(args.cache_dir, size["big_queries"], size["row_group_rows"])
        say(f"running `{cli_name} evaluate` on the {big_rows / 1e6:.0f}M-row log ...")
        peak, wall, out = run_peak_rss(evaluate_cmd(big))
        got = check_json(out, big_rows)
        assert got["n_queries"] == size["big_queries"]
        big_rate = big_rows / wall
        if peak is not None:
            rss.append((f"{big_name} / {big_rows / 1e6:.1f}M rows", big_rows, peak))
    for name, n, peak in rss:
        is_target = n >= n_rows
        rows.append((f"peak RSS of `{cli_name} evaluate`, {name}", fmt_bytes(peak),
                     f"≤ {fmt_bytes(TARGET_PEAK_RSS)}" if is_target else "reference",
                     met(peak <= TARGET_PEAK_RSS) if is_target else met(None)))
    if not rss:
        rows.append(("peak RSS", "n/a (no resource module on this platform)", "≤ 1 GiB",
                     met(None)))
    if big_rate is not None:
        rows.append((f"`{cli_name} evaluate`, {big_name} log, one run incl. start-up "
                     f"(and the ~20 ms probe interpreter)",
                     f"{big_rate / 1e6:,.1f}M rows/s", "—", met(None)))

    # 3. qrels mode from TREC files vs pytrec_eval --------------------------------------
    n_tq, n_td = size["trec_queries"], size["trec_docs"]
    with tempfile.TemporaryDirectory(prefix="trec-", dir=args.cache_dir) as tmp:
        say(f"writing a TREC run and qrels: {n_tq:,} queries x {n_td} documents ...")
        run, qrels, run_rows = write_trec_files(tmp, n_tq, n_td)
        ours = fastndcg_trec(run, qrels)  # warm-up
        assert ours.n_rows == run_rows
        shape = f"{n_tq:,} queries × {n_td} docs ({run_rows / 1e6:.1f}M run lines)"
        t_fast, _ = best_of(fastndcg_trec, 3, run, qrels)
        if have_pytrec_eval():
            say("pytrec_eval: checking equal per-query values, then timing (best of 3) ...")
            assert_same_as_pytrec(ours, pytrec_end_to_end(run, qrels))
            say(f"  {ours.n_queries:,} queries equal to 1e-12")
            t_pytrec, theirs = best_of(pytrec_end_to_end, 3, run, qrels)
            assert_same_as_pytrec(ours, theirs)
            speedup = t_pytrec / t_fast
            rows.append((f"pytrec_eval parse_qrel + parse_run + evaluate, {shape} (best of 3)",
                         fmt_time(t_pytrec), "reference", met(None)))
            rows.append(("`fastndcg.evaluate(run, qrels=..., gain='linear', ties='trec')` "
                         "from the files (best of 3)",
                         f"{fmt_time(t_fast)} ({run_rows / t_fast / 1e6:,.1f}M rows/s)", "—",
                         met(None)))
            rows.append(("speed-up vs pytrec_eval (per-query values equal to 1e-12)",
                         f"{speedup:,.1f}×", f"≥ {TARGET_SPEEDUP:.0f}×",
                         met(speedup >= TARGET_SPEEDUP)))
        else:
            rows.append((f"`fastndcg.evaluate` qrels mode, {shape} (best of 3)",
                         fmt_time(t_fast), "—", met(None)))
            rows.append(("speed-up vs pytrec_eval", "n/a (pip install pytrec-eval-terrier)",
                         f"≥ {TARGET_SPEEDUP:.0f}×", met(None)))

    # report ------------------------------------------------------------------------------
    print_table("fastndcg evaluate benchmark", rows, args.quick)
    layer = threading_layer()
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    print(f"- machine: {os.cpu_count()} CPUs ({usable} usable), {cpu_model()}, {total_memory()}; "
          f"load average {load}; Numba threads {numba.get_num_threads()}, threading layer "
          f"{layer}; {platform.system()} {platform.release()}")
    print(f"- versions: Python {platform.python_version()}, numpy {np.__version__}, "
          f"numba {numba.__version__}, pyarrow {pa.__version__}, pytrec_eval "
          f"{version('pytrec-eval-terrier', 'pytrec_eval')}, fastndcg {fastndcg.__version__}")
    print(f"- command line: `{' '.join(cli)}`; its first (warm-up) run on the "
          f"{n_rows / 1e6:.1f}M-row log took {fmt_time(first_wall)}; logs cached in "
          f"{args.cache_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
