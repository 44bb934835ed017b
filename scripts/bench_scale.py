#!/usr/bin/env python
"""Measure fastndcg at scale against its targets: flat memory, and Dask.

    python scripts/bench_scale.py                                # full sizes (~5-15 min on 2 cores)
    python scripts/bench_scale.py --quick                        # ~20x smaller, a smoke test
    python scripts/bench_scale.py --out docs/benchmarks/scale.md # also write the report + JSON

What is measured:

1. Peak resident memory of ``fastndcg evaluate LOG --per-query OUT.parquet -k
   1,3,5,10 --quiet --format json`` on a log of 30,000,000 queries and on one of
   3,000,000 queries of the same shape (~5 rows a query: ``mean_docs=5``, list
   lengths uniform on 1..9; query_id int64, doc_id int64, score float32, label
   int8; row groups of 1,048,576 rows). Targets: <= 1 GiB on the 30M-query log,
   and <= 1.3x the peak on the 3M-query log. The same without ``--per-query``
   (means only; nothing kept per query) is reported against the same bounds, and
   a 1,000-query log gives the interpreter's and libraries' share. Each command
   runs once; its rows/s is taken from the subprocess' wall clock (start-up
   included) and from the ``seconds`` it reports (the evaluation alone). The peak
   is ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` read by a small intermediate
   interpreter (``benchmarks/_procs.py``'s ``run_peak_rss``; it explains why
   not from this process). The per-query file is checked to hold every query and
   the means to equal those of the means-only run.
2. 100,000,000 rows in 20 Parquet files (~50 rows a query, the first 100M rows
   of the seeded synthetic log, cut by row count so queries straddle files) on a
   ``distributed.LocalCluster(processes=True)`` of 2 worker processes x 1 thread
   against 1 worker process x 1 thread: ``fastndcg.dask.evaluate(DIR,
   client=..., per_query=False)``, best of ``--repeat`` (3) each. Target: 2
   workers >= 1.6x the rows/s of 1. Each cluster's start-up (LocalCluster +
   Client + all workers up) and its first evaluation of a small 4-file dataset
   (loading the kernels, first tasks) are reported separately and never timed
   with the rest.
3. The same 2-worker cluster against ``fastndcg.evaluate(DIR, per_query=False)``
   in this process (Numba's threads on all cores), best of ``--repeat`` after a
   warm-up call. Target: dask rows/s / single-process rows/s >= 0.6.

Answers are asserted identical before anything is reported: every run's
``n_queries``, ``n_rows`` and means (to 1e-12), and, from one more run of each
path with ``per_query=DIR`` (timed once, shown for information), equal
per-query tables (``Table.equals``). The single-process path runs first, then
the 1-worker cluster, then the 2-worker one; one cluster at a time.

The logs are written once into a cache folder (``--cache-dir``; default
``$FASTNDCG_BENCH_CACHE`` or ``~/.cache/fastndcg-bench``; about 1.2 GB, 0.6 GB
and 0.1 GB at full size) and reused while their schema and sizes match;
per-query outputs go to a temporary folder there and are removed. A log that is
not cached yet is skipped when the disk has under 5 GB free. Ratios are taken
within this one run, since timings on a shared machine drift between runs.
Prints a markdown table (what | measured | target | met?), the machine and the
library versions; with ``--out FILE.md`` writes the same markdown there and the
raw numbers to ``FILE.json`` beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as _dt
import gc
import io
import json
import logging
import math
import os
import platform
import shutil
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (REPO, os.path.join(REPO, "scripts")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import numba  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import fastndcg  # noqa: E402
from benchmarks._report import (best_of, fmt_time, machine_facts, met,  # noqa: E402
                                print_table, version)
from fastndcg.synth import SCHEMA  # noqa: E402

# Dask's worker processes are started with "spawn", which imports this script again
# in every worker: the helpers that pull in pytest (benchmarks.test_bench_scale) and
# the benchmark helpers are imported inside the functions that use them, so workers stay
# lean and the cluster start-up measured here is that of a plain script.

K = [1, 3, 5, 10]
TOLERANCE = 1e-12
TARGET_PEAK_RSS = 1 << 30
TARGET_RSS_GROWTH = 1.3
TARGET_WORKER_SCALING = 1.6
TARGET_VS_SINGLE = 0.6
MIN_FREE_DISK = 5e9

FULL = {"small_queries": 3_000_000, "big_queries": 30_000_000, "mean_docs": 5,
        "row_group_rows": 1 << 20,
        "split_rows": 100_000_000, "split_files": 20, "split_mean_docs": 50,
        "split_row_group_rows": 1 << 20, "warm_rows": 200_000, "warm_files": 4}
QUICK = {"small_queries": 150_000, "big_queries": 1_500_000, "mean_docs": 5,
         "row_group_rows": 1 << 17,
         "split_rows": 5_000_000, "split_files": 20, "split_mean_docs": 50,
         "split_row_group_rows": 1 << 18, "warm_rows": 100_000, "warm_files": 4}
BASELINE_QUERIES = 1_000


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def default_cache_dir() -> str:
    return (os.environ.get("FASTNDCG_BENCH_CACHE")
            or os.path.join(os.path.expanduser("~"), ".cache", "fastndcg-bench"))


def fmt_rows(rows: int) -> str:
    return f"{rows / 1e6:,.1f}M rows" if rows >= 1e6 else f"{rows:,} rows"


def rate(rows: int, seconds: float) -> str:
    return f"{rows / seconds / 1e6:,.1f}M rows/s"


# --------------------------------------------------------------------------- cached inputs

def _split_files(folder: str, n_files: int) -> list[str]:
    return [os.path.join(folder, f"part-{i:03d}.parquet") for i in range(n_files)]


def _split_ok(folder: str, n_rows: int, n_files: int, row_group_rows: int) -> bool:
    paths = _split_files(folder, n_files)
    if sorted(os.listdir(folder)) != sorted(os.path.basename(p) for p in paths):
        return False
    per_file = n_rows // n_files
    try:
        for i, p in enumerate(paths):
            meta = pq.ParquetFile(p).metadata
            want = per_file if i < n_files - 1 else n_rows - per_file * (n_files - 1)
            if (meta.num_rows != want
                    or not meta.schema.to_arrow_schema().remove_metadata().equals(SCHEMA)
                    or meta.row_group(0).num_rows != min(row_group_rows, want)):
                return False
    except (OSError, pa.ArrowException, IndexError):
        return False
    return True


def cached_split(cache_dir: str, n_rows: int, n_files: int, mean_docs: int,
                 row_group_rows: int, seed: int = 0) -> tuple[str, list[str]]:
    """(folder, files) of the first ``n_rows`` rows of the synthetic log in ``n_files``
    files cut by row count (``benchmarks.test_bench_scale.write_split_log``)."""
    from benchmarks.test_bench_scale import write_split_log

    folder = os.path.join(cache_dir, f"split-{n_rows}r-{n_files}f-md{mean_docs}-seed{seed}"
                                     f"-rg{row_group_rows}")
    if os.path.isdir(folder):
        if _split_ok(folder, n_rows, n_files, row_group_rows):
            say(f"reusing {folder} ({n_rows:,} rows in {n_files} files)")
            return folder, _split_files(folder, n_files)
        say(f"{folder} is not the expected dataset; writing it again")
        shutil.rmtree(folder)
    os.makedirs(cache_dir, exist_ok=True)
    say(f"writing {folder}: {n_rows:,} rows of ~{mean_docs}-row queries in {n_files} files ...")
    tmp = f"{folder}.tmp-{os.getpid()}"
    t0 = time.perf_counter()
    try:
        write_split_log(tmp, n_rows, n_files, seed=seed, mean_docs=mean_docs,
                        row_group_rows=row_group_rows)
        os.rename(tmp, folder)
    finally:
        if os.path.isdir(tmp):
            shutil.rmtree(tmp)
    size = sum(os.path.getsize(p) for p in _split_files(folder, n_files))
    say(f"  {size / 2**20:,.0f} MiB in {time.perf_counter() - t0:.1f} s")
    return folder, _split_files(folder, n_files)


def enough_disk(cache_dir: str, wanted: list[bool]) -> tuple[bool, float]:
    """(may we write the inputs not cached yet, free bytes)."""
    os.makedirs(cache_dir, exist_ok=True)
    free = shutil.disk_usage(cache_dir).free
    return (all(wanted) or free >= MIN_FREE_DISK), free


# --------------------------------------------------------------------------- 1. memory

def measure_memory(size: dict, cache_dir: str, work: str, rows: list, results: dict) -> None:
    from benchmarks._files import cached_log
    from benchmarks._procs import check_json, cli_command, run_peak_rss, run_timed
    from benchmarks._report import fmt_bytes

    cli, cli_name = cli_command()
    ks = ",".join(map(str, K))
    md, rg = size["mean_docs"], size["row_group_rows"]
    results["cli"] = " ".join(cli)

    def command(path: str, out: str | None) -> list[str]:
        extra = ["--per-query", out] if out else []
        return [*cli, "evaluate", path, *extra, "-k", ks, "--quiet", "--format", "json"]

    big_path = os.path.join(cache_dir, f"synth-{size['big_queries']}q-md{md}-seed0-"
                                       f"rg{rg}.parquet")
    ok, free = enough_disk(cache_dir, [os.path.exists(big_path)])
    logs = [("baseline", BASELINE_QUERIES), ("small", size["small_queries"])]
    if ok:
        logs.append(("big", size["big_queries"]))
    else:
        say(f"skipping the {size['big_queries']:,}-query log: {free / 1e9:.1f} GB free in "
            f"{cache_dir}, under {MIN_FREE_DISK / 1e9:.0f} GB")

    runs: dict[tuple[str, str], dict] = {}
    first = True
    for name, n_queries in logs:
        path, n_rows = cached_log(cache_dir, n_queries, rg, mean_docs=md)
        if first:  # a first run may compile the Numba kernels (or load the cache)
            say("warming up the command line ...")
            wall, _ = run_timed(command(path, None))
            results["cli_first_run_s"] = wall
            first = False
        mean = None
        for mode in ("per-query", "means"):
            out = os.path.join(work, "per_query.parquet") if mode == "per-query" else None
            say(f"peak memory of `{cli_name} evaluate` {'--per-query ' if out else ''}on "
                f"{n_queries:,} queries ({fmt_rows(n_rows)}) ...")
            peak, wall, stdout = run_peak_rss(command(path, out))
            got = check_json(stdout, n_rows, mean)
            assert got["n_queries"] == n_queries, (got["n_queries"], n_queries)
            mean = {m: got[m] for m in (f"ndcg@{c}" for c in K)}
            run = {"queries": n_queries, "rows": n_rows, "peak_rss": peak, "wall_s": wall,
                   "evaluate_s": got["seconds"], "mean": mean}
            if out:
                meta = pq.read_metadata(out)
                assert meta.num_rows == n_queries, (meta.num_rows, n_queries)
                run["per_query_bytes"] = os.path.getsize(out)
                os.remove(out)
            runs[(name, mode)] = run
            say(f"  peak {fmt_bytes(peak) if peak is not None else 'n/a'}, {fmt_time(wall)}")
    results["memory"] = [{"log": n, "mode": m, **r} for (n, m), r in runs.items()]

    if runs[("small", "per-query")]["peak_rss"] is None:
        rows.append(("peak RSS", "n/a (no resource module on this platform)",
                     f"≤ {fmt_bytes(TARGET_PEAK_RSS)}", met(None)))
        return

    def label(name: str) -> str:
        r = runs[(name, "per-query")]
        return f"{r['queries']:,} queries / {fmt_rows(r['rows'])}"

    flags = {"per-query": "`{0} evaluate LOG --per-query OUT.parquet`".format(cli_name),
             "means": "`{0} evaluate LOG` (means only, no --per-query)".format(cli_name)}
    base = {m: runs[("baseline", m)]["peak_rss"] for m in flags}
    rows.append((f"peak RSS of `{cli_name} evaluate`, {label('baseline')} (interpreter + "
                 f"libraries)", f"{fmt_bytes(base['per-query'])} with --per-query, "
                 f"{fmt_bytes(base['means'])} means only", "reference", met(None)))
    for mode, flag in flags.items():
        small = runs[("small", mode)]
        if ("big", mode) not in runs:
            rows.append((f"peak RSS of {flag}, {size['big_queries']:,}-query log",
                         f"skipped: {free / 1e9:.1f} GB free disk "
                         f"(< {MIN_FREE_DISK / 1e9:.0f} GB)", f"≤ {fmt_bytes(TARGET_PEAK_RSS)}",
                         met(None)))
            continue
        big = runs[("big", mode)]
        growth = big["peak_rss"] / small["peak_rss"]
        rows.append((f"peak RSS of {flag}, {label('big')}",
                     fmt_bytes(big["peak_rss"]), f"≤ {fmt_bytes(TARGET_PEAK_RSS)}",
                     met(big["peak_rss"] <= TARGET_PEAK_RSS)))
        rows.append((f"same, {label('small')}", fmt_bytes(small["peak_rss"]), "reference",
                     met(None)))
        rows.append((f"peak RSS growth, {size['big_queries']:,} ÷ {size['small_queries']:,} "
                     f"queries, {flag}",
                     f"{growth:.2f}×", f"≤ {TARGET_RSS_GROWTH}×",
                     met(growth <= TARGET_RSS_GROWTH)))
    for mode, flag in flags.items():
        for name in ("small", "big"):
            if (name, mode) not in runs:
                continue
            r = runs[(name, mode)]
            extra = (f"; per-query file {r['per_query_bytes'] / 2**20:,.0f} MiB"
                     if "per_query_bytes" in r else "")
            rows.append((f"throughput of {flag}, {label(name)}, "
                         f"one run", f"{rate(r['rows'], r['wall_s'])} end to end "
                         f"({fmt_time(r['wall_s'])} incl. start-up); "
                         f"{rate(r['rows'], r['evaluate_s'])} inside evaluate{extra}", "—",
                         met(None)))


# --------------------------------------------------------------------------- 2-3. dask

def timed(fn, repeat: int, *args, **kwargs) -> tuple[list[float], object]:
    """(wall seconds of each of ``repeat`` calls, the last result); ``best_of`` that
    keeps every time, so the JSON shows the spread."""
    times, result = [], None
    for _ in range(repeat):
        t, result = best_of(fn, 1, *args, **kwargs)
        times.append(t)
    return times, result


def _close(client, cluster) -> None:
    with contextlib.suppress(Exception):
        client.close()
    with contextlib.suppress(Exception):
        cluster.close()


def measure_dask(size: dict, cache_dir: str, work: str, repeat: int, rows: list,
                 results: dict) -> None:
    import distributed

    import fastndcg.dask
    from benchmarks.test_bench_scale import assert_same_answer, straddling_cuts

    n_rows, n_files = size["split_rows"], size["split_files"]
    folder = os.path.join(cache_dir, f"split-{n_rows}r-{n_files}f-md{size['split_mean_docs']}"
                                     f"-seed0-rg{size['split_row_group_rows']}")
    ok, free = enough_disk(cache_dir, [os.path.isdir(folder)])
    if not ok:
        say(f"skipping Dask: {free / 1e9:.1f} GB free in {cache_dir}")
        rows.append(("Dask, 2 workers vs 1", f"skipped: {free / 1e9:.1f} GB free disk",
                     f"≥ {TARGET_WORKER_SCALING}×", met(None)))
        return
    folder, paths = cached_split(cache_dir, n_rows, n_files, size["split_mean_docs"],
                                 size["split_row_group_rows"])
    warm, _ = cached_split(cache_dir, size["warm_rows"], size["warm_files"],
                           size["split_mean_docs"], size["split_row_group_rows"])
    cuts = straddling_cuts(paths)
    assert cuts > 0, "no query straddles two files"
    label = (f"{n_rows / 1e6:g}M rows in {n_files} files (~{size['split_mean_docs']} rows a "
             f"query; {cuts} of {n_files - 1} cuts inside a query)")
    out: dict = {"rows": n_rows, "files": n_files, "straddling_cuts": cuts, "repeat": repeat}
    results["dask"] = out

    # single process ------------------------------------------------------------------
    say(f"single process: fastndcg.evaluate on {label}, best of {repeat} ...")
    fastndcg.evaluate(warm, k=K, per_query=False)
    times, single = timed(fastndcg.evaluate, repeat, folder, k=K, per_query=False)
    t_single = min(times)
    assert single.n_rows == n_rows
    t0 = time.perf_counter()
    single_dir = fastndcg.evaluate(folder, k=K, per_query=os.path.join(work, "single"))
    out["single"] = {"best_s": t_single, "times_s": times,
                     "per_query_dir_s": time.perf_counter() - t0,
                     "n_queries": single.n_queries, "mean": single.mean,
                     "numba_threads": numba.get_num_threads()}
    assert_same_answer(single_dir, single, tables=False)
    expected = single_dir.per_query
    assert expected.num_rows == single.n_queries
    del single_dir
    gc.collect()
    say(f"  {fmt_time(t_single)} ({rate(n_rows, t_single)}); {single.n_queries:,} queries")

    # clusters, one at a time ---------------------------------------------------------
    for n_workers in (1, 2):
        say(f"Dask LocalCluster, {n_workers} worker process(es) x 1 thread ...")
        t0 = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                           processes=True, dashboard_address=":0",
                                           silence_logs=logging.ERROR)
        client = distributed.Client(cluster)
        try:
            client.wait_for_workers(n_workers, timeout=300)
            startup = time.perf_counter() - t0
            t0 = time.perf_counter()
            fastndcg.dask.evaluate(warm, client=client, k=K, per_query=False)
            first = time.perf_counter() - t0
            say(f"  start-up {fmt_time(startup)}, first (small) evaluation {fmt_time(first)}; "
                f"timing, best of {repeat} ...")
            times, report = timed(fastndcg.dask.evaluate, repeat, folder, client=client, k=K,
                                  per_query=False)
            best = min(times)
            assert_same_answer(report, single, tables=False)
            t0 = time.perf_counter()
            with_dir = fastndcg.dask.evaluate(folder, client=client, k=K,
                                              per_query=os.path.join(work, f"dask{n_workers}"))
            dir_s = time.perf_counter() - t0
            assert_same_answer(with_dir, single, tables=False)
            assert with_dir.per_query.equals(expected), "per-query tables differ"
            del with_dir
            gc.collect()
        finally:
            _close(client, cluster)
        out[f"workers_{n_workers}"] = {"startup_s": startup, "first_s": first, "best_s": best,
                                       "times_s": times, "per_query_dir_s": dir_s}
        say(f"  {fmt_time(best)} ({rate(n_rows, best)}); per-query tables equal")

    t1, t2 = out["workers_1"]["best_s"], out["workers_2"]["best_s"]
    scaling, vs_single = t1 / t2, t_single / t2
    out.update(scaling=scaling, vs_single=vs_single)
    same = (f"answers identical: n_queries {single.n_queries:,}, means to 1e-12, per-query "
            f"tables equal")
    rows.append((f"`fastndcg.dask.evaluate(DIR, per_query=False)`, {label}, 1 worker process × "
                 f"1 thread (best of {repeat})", f"{rate(n_rows, t1)} ({fmt_time(t1)})",
                 "reference", met(None)))
    rows.append((f"same, 2 worker processes × 1 thread (best of {repeat})",
                 f"{rate(n_rows, t2)} ({fmt_time(t2)})", "—", met(None)))
    rows.append((f"Dask throughput, 2 workers ÷ 1 worker ({same})", f"{scaling:.2f}×",
                 f"≥ {TARGET_WORKER_SCALING}×", met(scaling >= TARGET_WORKER_SCALING)))
    rows.append((f"`fastndcg.evaluate(DIR, per_query=False)` in one process, same files, "
                 f"{numba.get_num_threads()} Numba threads (best of {repeat})",
                 f"{rate(n_rows, t_single)} ({fmt_time(t_single)})", "reference", met(None)))
    rows.append(("Dask 2 workers ÷ single process, throughput", f"{vs_single:.2f}",
                 f"≥ {TARGET_VS_SINGLE}", met(vs_single >= TARGET_VS_SINGLE)))
    w1, w2 = out["workers_1"], out["workers_2"]
    rows.append(("cluster start-up (LocalCluster + Client + workers up), not timed above",
                 f"1 worker {fmt_time(w1['startup_s'])}, 2 workers {fmt_time(w2['startup_s'])}",
                 "—", met(None)))
    rows.append((f"first evaluation on a fresh cluster ({size['warm_rows']:,} rows in "
                 f"{size['warm_files']} files: kernels, first tasks), not timed above",
                 f"1 worker {fmt_time(w1['first_s'])}, 2 workers {fmt_time(w2['first_s'])}",
                 "—", met(None)))
    rows.append(("with `per_query=DIR` (Parquet parts written), one run each",
                 f"single process {fmt_time(out['single']['per_query_dir_s'])}, "
                 f"1 worker {fmt_time(w1['per_query_dir_s'])}, "
                 f"2 workers {fmt_time(w2['per_query_dir_s'])}", "—", met(None)))


# --------------------------------------------------------------------------- main

def machine() -> dict:
    return {**machine_facts(),
            "load": ", ".join(f"{x:.1f}" for x in os.getloadavg())
            if hasattr(os, "getloadavg") else "?"}


def versions() -> dict:
    return {"python": platform.python_version(), "numpy": np.__version__,
            "numba": numba.__version__, "pyarrow": pa.__version__,
            "dask": version("dask"), "distributed": version("distributed"),
            "fastndcg": fastndcg.__version__}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="~20x smaller sizes (150,000 / 1,500,000 queries; 5M rows in 20 "
                             "files); targets are then indicative only")
    parser.add_argument("--out", metavar="FILE.md",
                        help="also write the markdown report here and the raw numbers to "
                             "FILE.json beside it")
    parser.add_argument("--cache-dir", default=default_cache_dir(),
                        help="where the synthetic logs are kept (default %(default)s; "
                             "$FASTNDCG_BENCH_CACHE)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="timed runs per Dask / single-process measurement (best of)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be >= 1")
    size = QUICK if args.quick else FULL
    started = time.perf_counter()
    date = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_start = machine()["load"]
    rows: list[tuple[str, str, str, str]] = []
    results: dict = {"date": date, "quick": args.quick, "plan": dict(size, k=K),
                     "cache_dir": args.cache_dir}

    os.makedirs(args.cache_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="out-", dir=args.cache_dir) as work:
        measure_memory(size, args.cache_dir, work, rows, results)
        measure_dask(size, args.cache_dir, work, args.repeat, rows, results)

    wall = time.perf_counter() - started
    m, v = machine(), versions()
    results.update(machine=m, versions=v, load_start=load_start, wall_s=wall,
                   targets=[{"what": w, "measured": x, "target": t, "met": ok}
                            for w, x, t, ok in rows])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print_table("fastndcg at scale: flat memory and Dask", rows, args.quick)
    lines = [buf.getvalue().strip("\n"), "",
             f"- machine: {m['cpus']} CPUs ({m['usable_cpus']} usable), {m['cpu_model']}, "
             f"{m['memory']}; load average {load_start} at the start, {m['load']} at the end; "
             f"Numba threads {m['numba_threads']}, threading layer {m['threading_layer']}; "
             f"{m['system']}",
             f"- data: seeded synthetic logs (`fastndcg.synth`; query_id int64, doc_id int64, "
             f"score float32 rounded to 2 decimals, label int8 0..4); memory: one file, "
             f"~{size['mean_docs']} rows a query (lengths uniform on "
             f"1..{2 * size['mean_docs'] - 1}), "
             f"row groups of {size['row_group_rows']:,} rows; Dask: the first "
             f"{fmt_rows(size['split_rows'])} of a log of ~{size['split_mean_docs']}-row queries "
             f"in {size['split_files']} files cut by row count, row groups of "
             f"{size['split_row_group_rows']:,} rows; k = {','.join(map(str, K))}, exp2 gain, "
             f"average ties",
             f"- versions: Python {v['python']}, numpy {v['numpy']}, numba {v['numba']}, "
             f"pyarrow {v['pyarrow']}, dask {v['dask']}, distributed {v['distributed']}, "
             f"fastndcg {v['fastndcg']}",
             f"- written by `python scripts/bench_scale.py{' --quick' if args.quick else ''}` "
             f"on {date} in {wall / 60:.1f} min; logs cached in {args.cache_dir}; command "
             f"line `{results.get('cli', '?')}` (its first run, warm-up: "
             f"{fmt_time(results.get('cli_first_run_s', math.nan))})"]
    text = "\n".join(lines) + "\n"
    print("\n" + text, end="")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)
        json_path = os.path.splitext(args.out)[0] + ".json"
        with open(json_path, "w") as f:
            json.dump(results, f, indent=1, default=str)
            f.write("\n")
        say(f"wrote {args.out} and {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
