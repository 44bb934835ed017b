"""``fastndcg.ndcg`` / ``ndcg_score`` of this checkout against another checkout of
fastndcg (say, the previous commit), on the same inputs, in one run.

Each side runs in its own process (``PYTHONPATH`` = its checkout, its own compile
cache, warmed first), the two alternating round by round; every round times each
case ``--repeat`` times. Reported: the median over all rounds of each side, as
rows/s, the ratio, and the largest difference between the two sides' answers
(every value compared; more than 1e-13 stops the script).

    git worktree add /tmp/prev HEAD~1
    python scripts/kernel_vs_checkout.py /tmp/prev --rounds 3 --repeat 3 --json out.json

Cases (the benchmark suite's shapes, ``benchmarks/_data.py``: float32 scores
rounded to 2 decimals so they tie, int8 labels 0..4):

* ``5rows``, ``10rows``, ``50rows``: ragged lists of ~5 (2M queries), ~10 (2M) and
  ~50 (1M) rows, k=[1, 3, 5, 10];
* ``1000rows-k10``, ``1000rows-k100``: 50,000 lists of 1,000 rows;
* ``1000rows-k100-f64``: the same with float64 scores;
* ``sklearn-dense``: ``ndcg_score`` on a tie-heavy 20,000 x 50 float64 matrix.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORKER = r"""
import json, sys, time
import numpy as np
import importlib.util
import os
import fastndcg  # the checkout on PYTHONPATH: imported before anything else is on the path
if os.path.dirname(os.path.dirname(os.path.abspath(fastndcg.__file__))) != os.path.abspath(os.environ["PYTHONPATH"]):
    raise SystemExit(f"imported {fastndcg.__file__}, not the checkout {os.environ['PYTHONPATH']}")
# the data: this checkout's benchmarks/_data.py for both sides, loaded by its path
spec = importlib.util.spec_from_file_location("bench_data", f"{sys.argv[2]}/benchmarks/_data.py")
_data = importlib.util.module_from_spec(spec)
spec.loader.exec_module(_data)

def cases():
    for name, n_q, rows, k, dt, fixed in (("5rows", 2_000_000, 5, [1, 3, 5, 10], np.float32, False),
                                          ("10rows", 2_000_000, 10, [1, 3, 5, 10], np.float32, False),
                                          ("50rows", 1_000_000, 50, [1, 3, 5, 10], np.float32, False),
                                          ("1000rows-k10", 50_000, 1000, [10], np.float32, True),
                                          ("1000rows-k100", 50_000, 1000, [100], np.float32, True),
                                          ("1000rows-k100-f64", 50_000, 1000, [100], np.float64, True)):
        s, l, o = _data.ragged(n_q, rows, fixed=fixed, score_dtype=dt)
        yield name, len(s), (lambda s=s, l=l, o=o, k=k: fastndcg.ndcg(s, l, o, k=k))
    y_true, y_score = _data.dense(20_000, 50, seed=0)
    yield "sklearn-dense", y_true.size, lambda: np.array([fastndcg.ndcg_score(y_true, y_score)])

repeat = int(sys.argv[1])
out = {}
for name, rows, call in cases():
    first = call()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    out[name] = {"rows": rows, "times": times}
    np.save(f"{sys.argv[3]}/{name}.npy", first)  # every value, for the exactness check
print("RESULT " + json.dumps(out))
"""


def run_side(checkout: str, cache: str, repeat: int, values: str) -> dict:
    env = dict(os.environ, PYTHONPATH=checkout, FASTNDCG_CACHE_DIR=cache)
    done = subprocess.run([sys.executable, "-c", WORKER, str(repeat), HERE, values], env=env,
                          cwd=tempfile.gettempdir(), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads([l for l in done.stdout.splitlines() if l.startswith("RESULT ")][-1][7:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", help="the other checkout (its root folder)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    sides = {"this": HERE, "other": os.path.abspath(args.other)}
    caches = {side: tempfile.mkdtemp(prefix=f"fastndcg-cache-{side}-") for side in sides}
    values = {side: tempfile.mkdtemp(prefix=f"fastndcg-values-{side}-") for side in sides}
    times: dict = {side: {} for side in sides}
    rows = {}
    for r in range(args.rounds):
        for side, path in sides.items():
            got = run_side(path, caches[side], args.repeat, values[side])
            for name, res in got.items():
                times[side].setdefault(name, []).extend(res["times"])
                rows[name] = res["rows"]
    import numpy as np
    table = {}
    print(f"{'case':<20} {'this (M rows/s)':>16} {'other (M rows/s)':>17} {'ratio':>7} "
          f"{'max |this - other|':>19}")
    for name in rows:
        a, b = (np.load(os.path.join(values[s], f"{name}.npy")) for s in sides)
        diff = float(np.nanmax(np.abs(a - b))) if a.size else 0.0
        if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)) or diff > 1e-13:
            raise SystemExit(f"{name}: the answers differ (max {diff:.3g})")
        this = rows[name] / float(np.median(times["this"][name]))
        other = rows[name] / float(np.median(times["other"][name]))
        table[name] = {"this_rows_s": this, "other_rows_s": other, "ratio": this / other,
                       "max_abs_diff": diff,
                       "median_s": {s: float(np.median(times[s][name])) for s in sides}}
        print(f"{name:<20} {this / 1e6:>16.1f} {other / 1e6:>17.1f} {this / other:>6.2f}x "
              f"{diff:>19.2g}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "repeat": args.repeat, "cases": table}, f, indent=1)


if __name__ == "__main__":
    main()
