"""Portable kernels (a generic CPU) against native ones (this CPU), in CPU seconds.

``fastndcg.ndcg`` on the kernel benchmarks' shapes (``benchmarks/_data.ragged``,
quick sizes: ~5, ~10, ~50 and 1,000 rows a query; k=1,3,5,10, and k=100 on the
1,000-row lists), on one thread, CPU seconds per call (median of 15): CPU time is
far less disturbed by other processes than wall time on a shared machine. Rounds
alternate a native and a portable process, each with a cache of its own
(``--cache``, compiled on the first round); prints the median over the rounds.
With ``--wall``: wall time on Numba's usual thread count instead (for a quiet
machine).

    python scripts/portable_speed.py --rounds 3
    python scripts/portable_speed.py --rounds 5 --wall
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = """
import json, sys, time
from fastndcg._kernels import _jit  # first: before the benchmarks' own Numba code starts
import fastndcg
from benchmarks import _data
out = {"portable": _jit.portable_active()}
for n in (5, 10, 50, 1000):
    q = _data.shapes(quick=True)["kernel_queries"][n]
    s, l, o = _data.ragged(q, 1000, fixed=True) if n == 1000 else _data.ragged(q, n)
    for k in ([1, 3, 5, 10], [100]) if n == 1000 else ([1, 3, 5, 10],):
        fastndcg.ndcg(s, l, o, k=k)
        clock = time.perf_counter if sys.argv[1:] == ["wall"] else time.process_time
        t = []
        for _ in range(15):
            c = clock()
            fastndcg.ndcg(s, l, o, k=k)
            t.append(clock() - c)
        out[f"{n} rows, k={k[-1]}"] = sorted(t)[7]
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "fastndcg-speed"))
    parser.add_argument("--wall", action="store_true",
                        help="wall time on Numba's usual threads, not CPU time on one")
    args = parser.parse_args()
    times: dict = {"native": [], "portable": []}
    for _ in range(args.rounds):
        for mode, flag in (("native", "0"), ("portable", "1")):
            threads = {} if args.wall else {"NUMBA_NUM_THREADS": "1"}
            env = dict(os.environ, **threads, FASTNDCG_PORTABLE=flag,
                       FASTNDCG_CACHE_DIR=os.path.join(args.cache, mode),
                       PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
            done = subprocess.run([sys.executable, "-c", CHILD, *(["wall"] if args.wall else [])],
                                  env=env, cwd=ROOT,
                                  capture_output=True, text=True, check=True)
            got = json.loads(done.stdout.strip().splitlines()[-1])
            assert got.pop("portable") == (mode == "portable"), "the code was not the one asked for"
            times[mode].append(got)
    print("| shape | native | portable | portable ÷ native speed |\n|---|---:|---:|---:|")
    for shape in times["native"][0]:
        n, p = (statistics.median(r[shape] for r in times[m]) for m in ("native", "portable"))
        print(f"| {shape} | {n * 1e3:.2f} ms | {p * 1e3:.2f} ms | {n / p:.2f}× |")


if __name__ == "__main__":
    main()
