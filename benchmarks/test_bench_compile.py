"""What compiling the kernels costs: a tracked figure, so a change that doubles
it is seen in review.

Group ``compile`` (heavy: each case compiles from an empty cache in a fresh
process, ``FASTNDCG_CACHE_DIR`` a new folder). Every case records, per kernel
function and variant (argument types), the CPU seconds of its own first compile
(Numba's compile events, callees' time excluded: ``fastndcg._warmup.CompileClock``),
their total, and the slowest variant, in ``extra_info``:

* ``job-ndcg`` -- ``fastndcg.ndcg`` on float32 scores and int8 labels (what the
  demo's log and the kernel benchmarks use);
* ``job-measures`` -- ``fastndcg.measure`` with every list-mode measure, same dtypes;
* ``job-trec`` -- ``fastndcg.evaluate`` of a TREC run and qrels with trec_eval's
  usual set (the string-id join, trec_eval's document order, the measures);
* ``warmup`` -- ``fastndcg.warmup()``: everything reachable.

Targets (``docs/performance.md``): any one job <= 5 s of CPU compiling; warm-up
<= 30 s; no variant over 3 s.

    FASTNDCG_BENCH_FULL=1 python -m pytest benchmarks/test_bench_compile.py -m heavy \\
        --benchmark-enable --benchmark-json=compile.json
"""

from __future__ import annotations

import json

import pytest

from benchmarks import _data, _procs

PRELUDE = """
import json, os, sys, time
import numpy as np
import fastndcg
from fastndcg._warmup import CompileClock
rng = np.random.default_rng(0)
s = np.round(rng.random(600), 1).astype(np.float32)
l = rng.integers(0, 4, 600).astype(np.int8)
o = np.arange(0, 601, 30)
c0 = time.process_time()
with CompileClock() as clock:
"""

JOBS = {
    "job-ndcg": "    fastndcg.ndcg(s, l, o, k=[1, 3, 5, 10])\n",
    "job-measures": ("    from fastndcg.measures import examples\n"
                     "    fastndcg.measure(s, l, o, measure=examples())\n"),
    "job-trec": ("    fastndcg.evaluate(sys.argv[1], qrels=sys.argv[2], preset='trec_eval', "
                 "measure=['ndcg_cut.5,10', 'map', 'recip_rank', 'P.5,10', "
                 "'recall.100,1000'], per_query=False)\n"),
    "warmup": "    fastndcg.warmup()\n",
}

REPORT = """
v = clock.variants()
print(json.dumps({"compile_s": clock.total(), "cpu_s": time.process_time() - c0,
                  "slowest": v[0] if v else None, "variants": v}))
"""


def _write_trec(tmp_path) -> tuple[str, str]:
    import numpy as np

    rng = np.random.default_rng(1)
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    with open(run, "w") as r, open(qrels, "w") as q:
        for qid in range(20):
            for d in range(50):
                r.write(f"{qid} Q0 doc{d} {d + 1} {rng.random():.3f} t\n")
                if d % 3 == 0:
                    q.write(f"{qid} 0 doc{d} {int(rng.integers(0, 3))}\n")
    return str(run), str(qrels)


@pytest.mark.heavy
@pytest.mark.parametrize("case", list(JOBS))
def test_compile(benchmark, tmp_path, case):
    benchmark.group = "compile"
    env = _procs.child_env(FASTNDCG_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("FASTNDCG_CACHE", None)
    cmd = _procs.python_command(PRELUDE + JOBS[case] + REPORT)
    if case == "job-trec":
        cmd += list(_write_trec(tmp_path))
    got = {}

    def once():
        _, out = _procs.run_timed(cmd, env=env)
        got.update(json.loads(out.strip().splitlines()[-1]))

    benchmark.pedantic(once, rounds=1, iterations=1)
    _data.describe(benchmark, f"first compile, empty cache: {case}", "fastndcg", case=case)
    benchmark.extra_info.update(
        compile_s=got["compile_s"], cpu_s=got["cpu_s"],
        slowest=got["slowest"], variants=got["variants"][:40],
        n_variants=len(got["variants"]))
    assert got["compile_s"] > 0  # an empty cache compiles something
