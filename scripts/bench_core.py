#!/usr/bin/env python
"""Measure fastndcg against its core targets, in one process and one run.

    python scripts/bench_core.py            # full sizes (1,000,000 queries x ~50 rows)
    python scripts/bench_core.py --quick    # small sizes, for a smoke test

What is measured (inputs from benchmarks/_data.py, seeded):

1. ``fastndcg.ndcg(scores, labels, offsets, k=[1, 3, 5, 10])`` on the ragged batch,
   best of 5 after a warm-up call -> rows/s; target >= 200M rows/s.
2. The memory-bandwidth probe (a Numba ``prange`` sum of ``scores[i] + labels[i]``
   over the same two arrays), best of 5 -> rows/s, and the ratio ndcg / probe;
   target >= 0.10.
3. ``fastndcg.ndcg_score`` (best of 5) against ``sklearn.metrics.ndcg_score``
   (best of 3) on the tie-heavy dense matrix, after asserting the two results
   agree to 1e-12; target speed-up >= 100x.
4. Start-up: a fresh interpreter runs ``import fastndcg`` then one small
   ``fastndcg.ndcg`` call, timing each; it runs twice so the compile cache is
   warm, and the second run is reported; target import + first result <= 1 s.

Ratios are taken within this one run, because timings on a shared machine drift
between runs. Prints a markdown table (what | measured | target | met?), the
machine and the library versions.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

import numba  # noqa: E402
import numpy as np  # noqa: E402

import fastndcg  # noqa: E402
from benchmarks import _data  # noqa: E402
from benchmarks._report import (best_of, cpu_model, fmt_time, met, print_table,  # noqa: E402
                                threading_layer, version)

K = [1, 3, 5, 10]
TARGET_ROWS_PER_S = 200e6
TARGET_PROBE_RATIO = 0.10
TARGET_SPEEDUP = 100.0
TARGET_STARTUP_S = 1.0

STARTUP_CODE = r"""
import json, time
t0 = time.perf_counter()
import fastndcg
t1 = time.perf_counter()
result = fastndcg.ndcg([0.9, 0.3, 0.3, 0.8, 0.1], [2, 0, 1, 1, 0], [0, 3, 5], k=[1, 3])
t2 = time.perf_counter()
assert result.shape == (2, 2)
print(json.dumps({"import_s": t1 - t0, "first_call_s": t2 - t1}))
"""


def run_startup() -> tuple[dict, dict, float]:
    """Two fresh interpreters; returns (first run, second run, second run's wall time)."""
    runs, wall = [], 0.0
    for _ in range(2):
        t0 = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", STARTUP_CODE], check=True,
                             capture_output=True, text=True, cwd=REPO)
        wall = time.perf_counter() - t0
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return runs[0], runs[1], wall


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small sizes; targets are then "
                             "indicative only")
    args = parser.parse_args(argv)
    quick = args.quick
    size = _data.sizes(quick)
    rows: list[tuple[str, str, str, str]] = []

    # 1-2. kernel vs the memory-bandwidth probe, on the same arrays -----------------
    print(f"generating the ragged batch ({size['n_queries']:,} queries) ...", file=sys.stderr)
    scores, labels, offsets = _data.ragged(size["n_queries"])
    n_rows, n_q = len(scores), len(offsets) - 1
    print("warming up (first calls compile Numba kernels) ...", file=sys.stderr)
    fastndcg.ndcg(scores, labels, offsets, k=K)
    _data.parallel_sum(scores, labels)
    t_ndcg, result = best_of(fastndcg.ndcg, 5, scores, labels, offsets, k=K)
    assert result.shape == (n_q, len(K))
    t_probe, total = best_of(_data.parallel_sum, 5, scores, labels)
    expected = float(scores.sum(dtype=np.float64) + labels.sum(dtype=np.int64))
    assert abs(total - expected) <= 1e-9 * abs(expected), (total, expected)
    ndcg_rate, probe_rate = n_rows / t_ndcg, n_rows / t_probe
    ratio = ndcg_rate / probe_rate
    rows.append((f"`fastndcg.ndcg`, k=[1,3,5,10], {n_q:,} queries / {n_rows / 1e6:.1f}M rows "
                 f"(best of 5)", f"{ndcg_rate / 1e6:,.0f}M rows/s ({fmt_time(t_ndcg)})",
                 f"≥ {TARGET_ROWS_PER_S / 1e6:.0f}M rows/s", met(ndcg_rate >= TARGET_ROWS_PER_S)))
    rows.append(("parallel-sum probe, same arrays (best of 5)",
                 f"{probe_rate / 1e6:,.0f}M rows/s ({fmt_time(t_probe)})", "reference", met(None)))
    rows.append(("ndcg / probe", f"{ratio:.3f}", f"≥ {TARGET_PROBE_RATIO:.2f}",
                 met(ratio >= TARGET_PROBE_RATIO)))
    del scores, labels, offsets, result
    gc.collect()

    # 3. ndcg_score vs scikit-learn ---------------------------------------------------
    y_true, y_score = _data.dense(size["dense_rows"], size["dense_cols"])
    shape = f"{y_true.shape[0]:,}×{y_true.shape[1]}"
    try:
        from sklearn.metrics import ndcg_score as sk_ndcg_score
    except ImportError:
        sk_ndcg_score = None
    ours = fastndcg.ndcg_score(y_true, y_score)  # warm-up
    t_ours, ours = best_of(fastndcg.ndcg_score, 5, y_true, y_score)
    if sk_ndcg_score is None:
        rows.append((f"`fastndcg.ndcg_score`, {shape} (best of 5)", fmt_time(t_ours),
                     "reference", met(None)))
        rows.append(("speed-up vs `sklearn.metrics.ndcg_score`",
                     "n/a (scikit-learn not installed)", f"≥ {TARGET_SPEEDUP:.0f}×", met(None)))
    else:
        theirs = sk_ndcg_score(y_true, y_score)
        assert abs(ours - theirs) <= 1e-12, f"ndcg_score differs: {ours!r} vs sklearn {theirs!r}"
        print(f"ndcg_score agrees with scikit-learn: |{ours!r} - {theirs!r}| <= 1e-12",
              file=sys.stderr)
        t_sk, _ = best_of(sk_ndcg_score, 3, y_true, y_score)
        speedup = t_sk / t_ours
        rows.append((f"`sklearn.metrics.ndcg_score`, {shape}, tie-heavy (best of 3)",
                     fmt_time(t_sk), "reference", met(None)))
        rows.append(("`fastndcg.ndcg_score`, same input (best of 5)", fmt_time(t_ours),
                     "—", met(None)))
        rows.append(("speed-up vs scikit-learn (results equal to 1e-12)", f"{speedup:,.0f}×",
                     f"≥ {TARGET_SPEEDUP:.0f}×", met(speedup >= TARGET_SPEEDUP)))

    # 4. start-up in a fresh interpreter, cache warm ------------------------------------
    first, second, wall = run_startup()
    startup = second["import_s"] + second["first_call_s"]
    rows.append(("start-up: `import fastndcg` (fresh process, 2nd run)",
                 fmt_time(second["import_s"]), "—", met(None)))
    rows.append(("start-up: first small `fastndcg.ndcg` result, after import",
                 fmt_time(second["first_call_s"]), "—", met(None)))
    rows.append(("start-up: import + first result", fmt_time(startup),
                 f"≤ {TARGET_STARTUP_S:.0f} s", met(startup <= TARGET_STARTUP_S)))

    # report ------------------------------------------------------------------------------
    print_table("fastndcg core benchmark", rows, quick)
    layer = threading_layer()
    print(f"- machine: {os.cpu_count()} CPUs (os.cpu_count()), {cpu_model()}; "
          f"Numba threads {numba.get_num_threads()}, threading layer {layer}; "
          f"{platform.system()} {platform.release()}")
    print(f"- versions: Python {platform.python_version()}, numpy {np.__version__}, "
          f"numba {numba.__version__}, scikit-learn {version('scikit-learn', 'sklearn')}, "
          f"fastndcg {fastndcg.__version__}")
    print(f"- start-up detail: 1st fresh process import {fmt_time(first['import_s'])} + first "
          f"result {fmt_time(first['first_call_s'])}; 2nd process wall time including "
          f"interpreter start {fmt_time(wall)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
