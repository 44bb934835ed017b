"""Start-up: fresh processes, each timed from outside (wall clock, process start
included) with ``benchmark.pedantic`` over a few rounds, after one warm-up round.
Start-up times are noisy (a shared machine, the page cache): the report takes the
median round of each, and every ratio is a ratio of medians (not the best round of
one side against the best round of the other).

Children import the same fastndcg as the suite and share its compile cache
(``benchmarks/_procs.py``); the fixtures call the same work once in this process
first, so the cache holds the kernels the children load ("warm cache"). Where a
child prints its own ``time.perf_counter()`` timings as JSON, their medians over
the rounds are recorded in ``extra_info`` (``import_s``, ``first_call_s``; every
round's under ``*_all``).

Group ``startup``:

* ``python -c "import fastndcg"`` (the child also reports the import alone);
* import + a first small ``fastndcg.ndcg`` result (DESIGN.md: <= 1 s with the cache);
* ``fastndcg evaluate LOG.parquet`` on the ~50-rows-a-query synthetic log (full:
  ~50M rows; quick: ~1M), the command exactly as a user types it; its means are
  checked once (``--format json``) against ``fastndcg.evaluate`` in this process;
* heavy: the first result with an empty compile cache (a new ``FASTNDCG_CACHE_DIR``:
  everything the demo's dtypes need is compiled; one round).

Group ``startup-trec``, on a real TREC run: Anserini's Core 2018 title + RM3 run
(50 queries x 1,000 documents) and the Core 2018 qrels, from the repository's
``tests/data/real`` (decompressed into a temporary folder: trec_eval reads plain
text; everyone reads the same files), and the real trec_eval, built from
``tests/trec_eval`` by the ``trec_eval_binary`` fixture (skipped only without a C
compiler). Case ``core18``, one run:

* ``trec_eval -m ndcg_cut.5,10 QRELS RUN``;
* ``fastndcg evaluate RUN --qrels QRELS --preset trec_eval -m ndcg_cut.5,10``, the
  same measures under trec_eval's rules, its means checked first against
  trec_eval's (4 printed decimals);
* ``fastndcg evaluate RUN --qrels QRELS --preset pytrec_eval -m ndcg_cut.5,10 --format
  json``, pytrec_eval's semantics, its means checked against pytrec_eval's to 1e-12;
* pytrec_eval in a fresh process: import, ``parse_qrel``, ``parse_run``,
  ``RelevanceEvaluator({"ndcg_cut.5,10"}).evaluate``, the means;
* the first ``fastndcg.evaluate(RUN, qrels=QRELS, preset="trec_eval",
  measure="ndcg_cut.5,10")`` call in a fresh process, warm cache: ``first_call_s``
  beyond ``import_s``.

Case ``core18xN``, many runs (N = 100 at full size, 3 at quick size): N copies of the
run with distinct run tags and seeded perturbed scores (``_files.perturbed_runs``):

* one ``fastndcg evaluate 'DIR/run-*.txt' --qrels QRELS --preset trec_eval -m
  ndcg_cut.5,10 --format json`` (the glob expanded by fastndcg);
* ``bash -c 'for f in DIR/run-*.txt; do trec_eval -m ndcg_cut.5,10 QRELS "$f"; done'``;

each run's means checked against trec_eval's (4 decimals) before either is timed.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics

import pytest

import fastndcg
from benchmarks import _data, _files, _procs

ROUNDS = 5
SLOW_ROUNDS = 3
K_LOG = [1, 3, 5, 10]
MEASURE = "ndcg_cut.5,10"
N_RUNS = 3 if _data.is_quick() else 100  # runs of the many-runs case
TREC_TOL = 5e-5 + 1e-12  # trec_eval prints 4 decimals

IMPORT_CODE = """
import json, time
t0 = time.perf_counter()
import fastndcg
print(json.dumps({"import_s": time.perf_counter() - t0}))
"""

FIRST_RESULT_CODE = """
import json, time
t0 = time.perf_counter()
import fastndcg
t1 = time.perf_counter()
result = fastndcg.ndcg([0.9, 0.3, 0.3, 0.8, 0.1], [2, 0, 1, 1, 0], [0, 3, 5], k=[1, 3])
t2 = time.perf_counter()
assert result.shape == (2, 2)
print(json.dumps({"import_s": t1 - t0, "first_call_s": t2 - t1}))
"""

# the demo's dtypes: int64 query ids, float32 scores, int8 labels
COLD_CODE = """
import json, time
t0 = time.perf_counter()
import fastndcg
t1 = time.perf_counter()
import numpy as np, pyarrow as pa
log = pa.table({"query_id": np.array([1, 1, 1, 2, 2], np.int64),
                "score": np.array([0.9, 0.3, 0.3, 0.8, 0.1], np.float32),
                "label": np.array([2, 0, 1, 1, 0], np.int8)})
report = fastndcg.evaluate(log, k=[1, 3, 5, 10])
t2 = time.perf_counter()
assert report.n_queries == 2
print(json.dumps({"import_s": t1 - t0, "first_call_s": t2 - t1}))
"""

FIRST_EVALUATE_CODE = """
import json, sys, time
t0 = time.perf_counter()
import fastndcg
t1 = time.perf_counter()
report = fastndcg.evaluate(sys.argv[1], qrels=sys.argv[2], preset="trec_eval",
                           measure="ndcg_cut.5,10")
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "first_call_s": t2 - t1, "n_rows": report.n_rows,
                  "mean": report.mean}))
"""

PYTREC_CODE = """
import json, sys, time
t0 = time.perf_counter()
import pytrec_eval
with open(sys.argv[2]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[1]) as f:
    run = pytrec_eval.parse_run(f)
result = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.5,10"}).evaluate(run)
mean = {f"ndcg@{c}": sum(v[f"ndcg_cut_{c}"] for v in result.values()) / len(result)
        for c in (5, 10)}
print(json.dumps({"seconds": time.perf_counter() - t0, "n_queries": len(result), "mean": mean}))
"""


def _time_child(benchmark, cmd, *, rounds=ROUNDS, env=None, warmup=True) -> list:
    """Time ``cmd`` as a fresh process; the JSON objects it printed (or None), one a round."""
    outputs = []

    def once():
        _, out = _procs.run_timed(cmd, env)
        try:
            outputs.append(_procs.last_json(out))
        except (ValueError, IndexError):
            outputs.append(None)
        return out

    out = benchmark.pedantic(once, rounds=rounds, iterations=1,
                             warmup_rounds=1 if warmup else 0)
    return out, outputs


def _record_medians(benchmark, outputs: list, *keys: str) -> None:
    """The median over the rounds of each of the child's own timings (``keys``), and
    every round's (``KEY_all``)."""
    got = [o for o in outputs if o]
    if not got:
        return
    for key in keys:
        benchmark.extra_info[key] = statistics.median(o[key] for o in got)
        benchmark.extra_info[f"{key}_all"] = [o[key] for o in got]


# --------------------------------------------------------------------------- startup

@pytest.mark.benchmark(group="startup")
def test_import(benchmark):
    _, outputs = _time_child(benchmark, _procs.python_command(IMPORT_CODE))
    _data.describe(benchmark, 'python -c "import fastndcg"', "fastndcg", case="import")
    _record_medians(benchmark, outputs, "import_s")


@pytest.mark.benchmark(group="startup")
def test_first_result(benchmark):
    fastndcg.ndcg([0.9, 0.3, 0.3, 0.8, 0.1], [2, 0, 1, 1, 0], [0, 3, 5], k=[1, 3])  # the cache
    _, outputs = _time_child(benchmark, _procs.python_command(FIRST_RESULT_CODE))
    _data.describe(benchmark, "import + first small fastndcg.ndcg result (warm cache)",
                   "fastndcg", case="first-result")
    _record_medians(benchmark, outputs, "import_s", "first_call_s")


@pytest.mark.heavy
@pytest.mark.benchmark(group="startup")
def test_first_result_empty_cache(benchmark, tmp_path):
    env = _procs.child_env(FASTNDCG_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("FASTNDCG_CACHE", None)
    _, outputs = _time_child(benchmark, _procs.python_command(COLD_CODE), rounds=1, env=env,
                             warmup=False)
    _data.describe(benchmark, "import + first fastndcg.evaluate, empty compile cache "
                              "(demo dtypes)", "fastndcg", case="cold")
    _record_medians(benchmark, outputs, "import_s", "first_call_s")
    benchmark.extra_info["cache_files"] = sum(len(f) for _, _, f in os.walk(tmp_path / "cache"))


@pytest.fixture(scope="module")
def cli_log(parquet_log):
    """(path, rows, in-process report) of the ~50-rows-a-query log; the cache is warm."""
    path, n_rows, _ = parquet_log(50)
    report = fastndcg.evaluate(path, k=K_LOG, per_query=False)
    return path, n_rows, report


@pytest.mark.benchmark(group="startup")
def test_cli_evaluate_log(benchmark, cli_log):
    path, n_rows, report = cli_log
    cli, name = _procs.cli_command()
    _, out = _procs.run_timed([*cli, "evaluate", path, "-k", ",".join(map(str, K_LOG)),
                               "--format", "json"])
    _procs.check_json(out, n_rows, report.mean)
    _time_child(benchmark, [*cli, "evaluate", path], rounds=SLOW_ROUNDS)
    _data.describe(benchmark, f"{name} evaluate LOG.parquet", "fastndcg", case="cli-log",
                   rows_per_query=50)
    _data.record_rows_per_s(benchmark, n_rows, report.n_queries)


# --------------------------------------------------------------------------- startup-trec

@pytest.fixture(scope="module")
def trec_real(tmp_path_factory):
    """(run, qrels, run lines) of the Core 2018 run, as plain text in a temporary
    folder; fastndcg's kernels for the cases below in the cache."""
    folder = tmp_path_factory.mktemp("core18")
    run = _files.unpacked(_files.CORE18_RUN, folder)
    qrels = _files.unpacked(_files.CORE18_QRELS, folder)
    with open(run, "rb") as f:
        n_rows = sum(1 for line in f if line.strip())
    for preset in ("trec_eval", "pytrec_eval"):
        fastndcg.evaluate(str(run), qrels=str(qrels), preset=preset, measure=MEASURE)
    return str(run), str(qrels), n_rows


def _trec_case(benchmark, system: str, role: str, n_rows: int, case: str = "core18",
               **info) -> None:
    _data.describe(benchmark, system, role, case=case, **info)
    _data.record_rows_per_s(benchmark, n_rows)


@pytest.fixture(scope="module")
def trec_eval_means(trec_real, trec_eval_binary) -> dict:
    """trec_eval's means on the Core 2018 run (4 decimals)."""
    run, qrels, _ = trec_real
    _, out = _procs.run_timed([trec_eval_binary, "-m", MEASURE, qrels, run])
    (means,) = _procs.trec_eval_means(out)
    return means


def _check_against_trec_eval(got: dict, theirs: dict, what: str) -> None:
    assert set(theirs) == {"ndcg@5", "ndcg@10"}, theirs
    for name, value in theirs.items():
        assert abs(got[name] - value) <= TREC_TOL, (what, name, got[name], value)


@pytest.mark.benchmark(group="startup-trec")
def test_trec_eval_binary(benchmark, trec_real, trec_eval_binary, trec_eval_means):
    run, qrels, n_rows = trec_real
    out, _ = _time_child(benchmark, [trec_eval_binary, "-m", MEASURE, qrels, run])
    assert _procs.trec_eval_means(out) == [trec_eval_means]
    _trec_case(benchmark, f"trec_eval -m {MEASURE} QRELS RUN", "peer", n_rows,
               trec_eval="built from tests/trec_eval (10.0-rc3)")


@pytest.mark.benchmark(group="startup-trec")
def test_cli_trec(benchmark, trec_real, trec_eval_means):
    run, qrels, n_rows = trec_real
    cli, name = _procs.cli_command()
    cmd = [*cli, "evaluate", run, "--qrels", qrels, "--preset", "trec_eval", "-m", MEASURE]
    _, out = _procs.run_timed([*cmd, "--format", "json"])
    _check_against_trec_eval(_procs.check_json(out, n_rows), trec_eval_means, "fastndcg")
    _time_child(benchmark, cmd)
    _trec_case(benchmark, f"{name} evaluate RUN --qrels QRELS --preset trec_eval -m {MEASURE}",
               "fastndcg", n_rows, semantics="trec_eval's (linear gain, trec ties)",
               checked_against_trec_eval=True)


@pytest.fixture(scope="module")
def pytrec_means(trec_real) -> dict | None:
    """pytrec_eval's means on the real run (a fresh process), or None if not installed."""
    try:
        import pytrec_eval  # noqa: F401
    except ImportError:
        return None
    run, qrels, _ = trec_real
    _, out = _procs.run_json(_procs.python_command(PYTREC_CODE) + [run, qrels])
    return out["mean"]


@pytest.mark.benchmark(group="startup-trec")
def test_cli_trec_preset(benchmark, trec_real, pytrec_means):
    run, qrels, n_rows = trec_real
    cli, name = _procs.cli_command()
    out, _ = _time_child(benchmark, [*cli, "evaluate", run, "--qrels", qrels, "--preset",
                                     "pytrec_eval", "-m", MEASURE, "--format", "json"])
    got = _procs.check_json(out, n_rows)
    if pytrec_means is not None:
        for name_k, value in pytrec_means.items():
            assert abs(got[name_k] - value) <= 1e-12, (name_k, got[name_k], value)
    _trec_case(benchmark, f"{name} evaluate RUN --qrels QRELS --preset pytrec_eval -m "
                          f"{MEASURE} --format json", "fastndcg", n_rows,
               semantics="pytrec_eval's (linear gain, trec ties, float32 scores)",
               checked_against_pytrec_eval=pytrec_means is not None)


@pytest.mark.benchmark(group="startup-trec")
def test_pytrec_eval_process(benchmark, trec_real, pytrec_means, trec_eval_means):
    pytest.importorskip("pytrec_eval")
    run, qrels, n_rows = trec_real
    _check_against_trec_eval(pytrec_means, trec_eval_means, "pytrec_eval")
    _, outputs = _time_child(benchmark, _procs.python_command(PYTREC_CODE) + [run, qrels])
    assert all(o["mean"] == pytrec_means for o in outputs)
    _trec_case(benchmark, "pytrec_eval in a fresh process (import, parse, evaluate)", "peer",
               n_rows)
    _record_medians(benchmark, outputs, "seconds")


@pytest.mark.benchmark(group="startup-trec")
def test_first_evaluate(benchmark, trec_real):
    run, qrels, n_rows = trec_real
    expected = fastndcg.evaluate(run, qrels=qrels, preset="trec_eval", measure=MEASURE).mean
    _, outputs = _time_child(benchmark, _procs.python_command(FIRST_EVALUATE_CODE) + [run, qrels])
    for o in outputs:
        assert o["n_rows"] == n_rows and o["mean"] == pytest.approx(expected, abs=1e-12)
    _data.describe(benchmark, "import fastndcg, then the first fastndcg.evaluate(RUN, "
                              "qrels=QRELS, preset='trec_eval', measure='ndcg_cut.5,10') "
                              "(warm cache)", "fastndcg", case="first-evaluate")
    _record_medians(benchmark, outputs, "import_s", "first_call_s")
    _data.record_rows_per_s(benchmark, n_rows)


# --------------------------------------------------------------------------- many runs

@pytest.fixture(scope="module")
def many_runs(trec_real, trec_eval_binary, tmp_path_factory):
    """(glob of the N runs, qrels, rows in all, fastndcg command, trec_eval loop): the
    answers of both checked, run by run, before anything is timed."""
    run, qrels, n_rows = trec_real
    folder = tmp_path_factory.mktemp(f"core18x{N_RUNS}")
    paths = _files.perturbed_runs(run, folder, N_RUNS, seed=0)
    pattern = str(folder / "run-*.txt")
    cli, name = _procs.cli_command()
    fast = [*cli, "evaluate", pattern, "--qrels", qrels, "--preset", "trec_eval", "-m", MEASURE,
            "--format", "json"]
    loop = ["bash", "-c", f"for f in {shlex.quote(str(folder))}/run-*.txt; do "
                          f"{shlex.quote(trec_eval_binary)} -m {MEASURE} {shlex.quote(qrels)} "
                          f'"$f"; done']
    _, out = _procs.run_timed(fast)
    ours = [json.loads(line) for line in out.splitlines()]
    _, out = _procs.run_timed(loop)
    theirs = _procs.trec_eval_means(out)
    assert len(ours) == len(theirs) == len(paths) == N_RUNS
    assert [o["runid"] for o in ours] == [f"copy-{i:0{len(str(N_RUNS - 1))}d}"
                                          for i in range(N_RUNS)]
    for o, t in zip(ours, theirs):
        assert o["n_rows"] == n_rows
        _check_against_trec_eval(o, t, o["runid"])
    assert len({o["ndcg@10"] for o in ours}) > 1  # the copies are distinct runs
    return pattern, N_RUNS * n_rows, (fast, name), loop


@pytest.mark.benchmark(group="startup-trec")
def test_cli_many_runs(benchmark, many_runs):
    pattern, n_rows, (cmd, name), _ = many_runs
    _time_child(benchmark, cmd, rounds=SLOW_ROUNDS, warmup=False)
    _trec_case(benchmark, f"{name} evaluate 'DIR/run-*.txt' --qrels QRELS --preset trec_eval "
                          f"-m {MEASURE} --format json ({N_RUNS} runs, one process)", "fastndcg",
               n_rows, case=f"core18x{N_RUNS}", runs=N_RUNS, checked_against_trec_eval=True)


@pytest.mark.benchmark(group="startup-trec")
def test_trec_eval_many_runs(benchmark, many_runs):
    _, n_rows, _, loop = many_runs
    _time_child(benchmark, loop, rounds=SLOW_ROUNDS, warmup=False)
    _trec_case(benchmark, f"bash -c 'for f in DIR/run-*.txt; do trec_eval -m {MEASURE} QRELS "
                          f"\"$f\"; done' ({N_RUNS} processes)", "peer", n_rows,
               case=f"core18x{N_RUNS}", runs=N_RUNS)
