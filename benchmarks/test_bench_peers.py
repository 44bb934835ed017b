"""fastndcg beside its peers (pytest-benchmark), grouped by what is measured.

Groups (``--benchmark-group-by=group``, the default), each with one benchmark per
system and input size, the systems wrapped by ``benchmarks/_peers.py``:

* ``kernel-queries`` -- ``fastndcg.ndcg`` (k=[1,3,5,10], linear gain) on ragged
  batches of ~20 rows per query, 1e3 .. 1e7 queries;
* ``kernel-length`` -- equal-length lists of 10 .. 10,000 rows, k=10;
* ``kernel-k`` -- lists of 1,000 rows, k = 1 .. 1,000;
* ``kernel-skewed`` -- one query of 10M rows among 1M queries of ~10 rows;
* ``kernel-dtypes`` -- float32/int8, float64/int64, float64/float64 (fractional labels);
* ``sklearn-dense`` -- ``fastndcg.ndcg_score`` against ``sklearn.metrics.ndcg_score``
  on dense matrices, tie-aware (tie-heavy scores) and ``ignore_ties=True``;
* ``ranx`` -- qrels mode from in-memory tables: ``fastndcg.evaluate(run,
  qrels=qrels, gain="linear")`` against ranx built from dicts + ``ranx.evaluate``
  (end to end) and ``ranx.evaluate`` alone;
* ``ranx-parquet`` -- a Parquet log end to end: ``fastndcg.evaluate(path)``
  against ranx reading it through pandas.

(Elsewhere: the shapes of real logs in ``test_bench_core.py``; Parquet logs
against pyarrow's bare read, and TREC files against pytrec_eval, in
``test_bench_evaluate.py``; DuckDB and polars in ``test_bench_sql.py``; fresh
processes in ``test_bench_startup.py``.)

In the kernel groups the systems are ``fastndcg`` (the kernel), ``probe`` (a Numba
parallel sum over the same two arrays: the memory-bandwidth bound),
``reference`` (``fastndcg.reference``, pure Python: timed on small inputs only),
``sklearn`` / ``sklearn-ignore-ties`` (equal-length lists only, as the dense
matrices ``ndcg_score`` takes) and ``ranx`` (``ranx.evaluate`` on Qrels/Run built
beforehand from the same rows, judged with their labels).

Checks, before anything is timed: fastndcg equals ``fastndcg.reference`` (to
1e-12, on the whole input, or on its first queries where the input is large; the
skewed group's huge query against scikit-learn); every peer equals fastndcg per
query, to 1e-12, on the same input. scikit-learn's tie-aware ``ndcg_score`` is
fastndcg's ``ties="average"`` and gets the tie-heavy scores; ranx and
scikit-learn's ``ignore_ties=True`` break ties arbitrarily (an unstable argsort),
so they get the same batch with tie-free scores (``_data.tie_free``: a random
permutation of 0..n-1 inside each query) and are compared with fastndcg on those.
fastndcg's own timing is on the tie-heavy scores.

Each function is called once before it is timed (compilation, cache loading,
ranx's own Numba compilation), then timed. A peer that is not installed is
skipped, saying so; inputs too large for a slow peer are skipped too.

Sizes are small by default (the test suite and CI run this with
``--benchmark-disable``, under a minute); ``FASTNDCG_BENCH_FULL=1`` gives the
full ranges (the 1e7-query batch and the 10M-row query only there; the 1e7-query
batch and ranx at 1e5 queries are marked heavy: ``-m "not heavy"`` leaves them out):
``FASTNDCG_BENCH_FULL=1 pytest benchmarks/test_bench_peers.py --benchmark-enable``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

import numpy as np
import pytest

from benchmarks import _data
from benchmarks import _peers as P

K = [1, 3, 5, 10]
QUICK = _data.is_quick()


def pick(quick, full):
    return quick if QUICK else full


QUERIES = pick([1_000, 10_000], [1_000, 10_000, 100_000, 1_000_000, 10_000_000])
QUERY_ROWS = 20  # mean rows per query in kernel-queries
LENGTHS = [10, 100, 1_000, 10_000]
LENGTH_ROWS = pick(50_000, 1_000_000)  # rows per case in kernel-length
CUTOFFS = [1, 10, 100, 1_000]
K_LENGTH, K_QUERIES = 1_000, pick(50, 1_000)
SKEWED = pick((10_000, 100_000), (1_000_000, 10_000_000))  # (small queries, rows of the big one)
DTYPES = [(np.float32, np.int8), (np.float64, np.int64), (np.float64, np.float64)]
DTYPE_QUERIES = pick(20_000, 1_000_000)
DENSE = pick([(500, 50)], [(20_000, 50), (1_000, 1_000)])
RANX_QUERIES = pick([1_000], [10_000, 100_000])
RANX_UNRETRIEVED = 5  # judged documents per query that the run does not retrieve
HEAVY_QUERIES = 10_000_000  # kernel-queries from here on (200M rows) are marked heavy
HEAVY_RANX_QUERIES = 100_000  # ranx groups from here on (5M rows of Python dicts): heavy

REFERENCE_MAX_ROWS = 100_000  # timed only up to here (pure Python, ~1 s)
REFERENCE_CHECK_ROWS = 20_000  # larger inputs: checked on their first queries
RANX_MAX_ROWS = pick(300_000, 2_000_000)  # Python dicts of every row: building them is the limit
SLOW_ROUNDS = pick(1, 3)  # rounds for slow peers (reference, scikit-learn, ranx)


def timed(benchmark, runner: P.Runner, *, rounds: int | None = None, warm: bool = True,
          **info):
    """Call ``runner`` once (warm-up, unless already done), then time it.

    ``rounds=None`` lets pytest-benchmark calibrate (fast calls); slow ones get a
    fixed number of single-call rounds. Records rows/s and what was run.
    """
    if warm:
        runner.call()
    if rounds is None:
        result = benchmark(runner.call)
    else:
        result = benchmark.pedantic(runner.call, rounds=rounds, iterations=1)
    benchmark.extra_info.update(system=runner.system, role=runner.role, note=runner.note, **info)
    _data.record_rows_per_s(benchmark, runner.n_rows, runner.n_queries)
    return result


# --------------------------------------------------------------------------- kernel cases

@dataclass
class Case:
    """One input of a kernel group; variants and fastndcg's answers built lazily."""

    group: str
    label: str
    build: Callable[[], tuple]
    k: object = field(default_factory=lambda: list(K))
    dense: bool = False  # equal-length lists: scikit-learn can take them
    heavy: bool = False  # marked heavy (deselected by -m "not heavy")

    def __str__(self) -> str:
        return f"{self.group}-{self.label}"

    def drop(self) -> None:
        """Forget the input, its variants and the answers (free the memory)."""
        for name in ("built", "expected", "tie_free", "tie_free_expected", "qrels_run"):
            self.__dict__.pop(name, None)

    @cached_property
    def built(self) -> tuple:
        """What ``build`` returns: (scores, labels, offsets[, index of the huge query])."""
        return self.build()

    @property
    def batch(self) -> tuple:
        return self.built[:3]

    @property
    def n_rows(self) -> int:
        return len(self.batch[0])

    def fastndcg(self, batch=None) -> P.Runner:
        return P.fastndcg_kernel(*(batch or self.batch), self.k)

    @cached_property
    def expected(self) -> np.ndarray:
        """fastndcg's answer (its warm-up call), checked against the reference."""
        expected = self.fastndcg().per_query()
        scores, labels, offsets = self.batch
        n = int(np.searchsorted(offsets, min(self.n_rows, REFERENCE_CHECK_ROWS), "right")) - 1
        n = max(n, 1)
        ref = P.reference_kernel(scores[:offsets[n]], labels[:offsets[n]], offsets[:n + 1], self.k)
        P.assert_same(ref.per_query(), expected[:n], what=f"fastndcg vs reference, {self}")
        return expected

    @cached_property
    def tie_free(self) -> tuple:
        scores, labels, offsets = self.batch
        return _data.tie_free(scores, offsets), labels, offsets

    @cached_property
    def tie_free_expected(self) -> np.ndarray:
        return self.fastndcg(self.tie_free).per_query()

    @cached_property
    def qrels_run(self) -> P.QrelsRun:
        return P.qrels_run(*self.tie_free)


def _kernel_cases() -> list[Case]:
    cases = [Case("kernel-queries", f"{n:.0e}", lambda n=n: _data.ragged(n, QUERY_ROWS),
                  heavy=n >= HEAVY_QUERIES)
             for n in QUERIES]
    cases += [Case("kernel-length", f"len{m}",
                   lambda m=m: _data.ragged(max(1, LENGTH_ROWS // m), m, fixed=True),
                   k=[10], dense=True) for m in LENGTHS]
    cases += [Case("kernel-k", f"k{c}",
                   lambda: _data.ragged(K_QUERIES, K_LENGTH, fixed=True), k=[c], dense=True)
              for c in CUTOFFS]
    n_small, big = SKEWED
    cases.append(Case("kernel-skewed", f"{big:.0e}-in-{n_small:.0e}",
                      lambda: _data.skewed(n_small, big)))
    cases += [Case("kernel-dtypes", f"{np.dtype(s).name}-{np.dtype(lab).name}",
                   lambda s=s, lab=lab: _data.ragged(DTYPE_QUERIES, 50, score_dtype=s,
                                                     label_dtype=lab))
              for s, lab in DTYPES]
    return cases


def _params(values, heavy, ids=str) -> list:
    """``values`` as pytest params, those where ``heavy(value)`` marked heavy."""
    return [pytest.param(v, marks=[pytest.mark.heavy] if heavy(v) else [], id=ids(v))
            for v in values]


@pytest.fixture(scope="module", params=_params(_kernel_cases(), lambda c: c.heavy))
def case(request) -> Case:
    """Module-scoped, so pytest runs every system on one input before building the next;
    the input and its variants are dropped afterwards."""
    yield request.param
    request.param.drop()


def test_fastndcg(benchmark, case):
    benchmark.group = case.group
    case.expected  # the warm-up call, checked against the reference
    if case.group == "kernel-skewed":
        _check_big_query(case)
    result = timed(benchmark, case.fastndcg(), warm=False, case=case.label, k=case.k)
    np.testing.assert_array_equal(P.as_2d(result), case.expected)


def _check_big_query(case: Case) -> None:
    """The huge query of the skewed batch against scikit-learn (one row of a matrix)."""
    ok, _ = P.available("sklearn")
    if not ok:
        return
    scores, labels, offsets, big = case.built
    a, b = offsets[big], offsets[big + 1]
    theirs = P.sklearn_dense(labels[a:b][None, :], scores[a:b][None, :], case.k).per_query()
    P.assert_same(theirs, case.expected[big:big + 1], what="huge query vs scikit-learn")


def test_probe(benchmark, case):
    benchmark.group = case.group
    scores, labels, _ = case.batch
    expected = float(scores.sum(dtype=np.float64) + labels.sum(dtype=np.float64))
    total = timed(benchmark, P.bandwidth_probe(scores, labels), case=case.label)
    assert total == pytest.approx(expected, rel=1e-9)


def test_reference(benchmark, case):
    benchmark.group = case.group
    if case.n_rows > REFERENCE_MAX_ROWS:
        pytest.skip(f"{case.n_rows:,} rows: too many for the pure-Python reference "
                    f"(timed up to {REFERENCE_MAX_ROWS:,}; checked on the first queries)")
    runner = P.reference_kernel(*case.batch, case.k)
    P.assert_same(case.expected, runner.per_query(), what=f"reference vs fastndcg, {case}")
    timed(benchmark, runner, rounds=SLOW_ROUNDS, warm=False, case=case.label, k=case.k)


@pytest.mark.parametrize("ignore_ties", [False, True], ids=["tie-aware", "ignore-ties"])
def test_sklearn(benchmark, case, ignore_ties):
    benchmark.group = case.group
    if not case.dense:
        pytest.skip(f"{case.group}: lists of unequal length; scikit-learn takes dense matrices")
    P.require("sklearn")
    scores, labels, offsets = case.tie_free if ignore_ties else case.batch
    y_true, y_score = _data.as_dense(scores, labels, offsets)
    runner = P.sklearn_dense(y_true, y_score, case.k, ignore_ties=ignore_ties)
    expected = case.tie_free_expected if ignore_ties else case.expected
    P.assert_same(expected, runner.per_query(), what=f"{runner.system} vs fastndcg, {case}")
    timed(benchmark, runner, rounds=SLOW_ROUNDS, case=case.label, k=case.k)


def test_ranx(benchmark, case):
    benchmark.group = case.group
    P.require("ranx")
    if case.n_rows > RANX_MAX_ROWS:
        pytest.skip(f"{case.n_rows:,} rows: too many to build ranx's Python dicts here "
                    f"(up to {RANX_MAX_ROWS:,})")
    labels = case.batch[1]
    if labels.dtype.kind == "f" and not np.array_equal(labels, np.floor(labels)):
        pytest.skip("fractional labels: ranx's Qrels hold integer relevance only")
    runner = P.ranx_evaluate(case.qrels_run, case.k)
    P.assert_same(case.tie_free_expected, runner.per_query(),
                  what=f"ranx vs fastndcg (tie-free scores), {case}")
    timed(benchmark, runner, rounds=SLOW_ROUNDS, warm=False, case=case.label, k=case.k)


# --------------------------------------------------------------------------- sklearn-dense

@pytest.fixture(scope="module", params=DENSE, ids=lambda s: f"{s[0]}x{s[1]}")
def dense_inputs(request) -> dict:
    """The tie-heavy matrices of ``_data.dense`` and a tie-free pair of the same shape."""
    rows, cols = request.param
    tie_free = _data.ragged(rows, cols, fixed=True, tie_free=True, score_dtype=np.float64,
                            label_dtype=np.int64)
    return {False: _data.dense(rows, cols), True: _data.as_dense(*tie_free)}


def _dense_pair(dense_inputs, ignore_ties: bool):
    y_true, y_score = dense_inputs[ignore_ties]
    fast = P.fastndcg_dense(y_true, y_score, None, ignore_ties=ignore_ties)
    ours = fast.call()[0]  # the warm-up call
    if P.available("sklearn")[0]:
        theirs = P.sklearn_dense(y_true, y_score, None, ignore_ties=ignore_ties)
        P.check(theirs, fast)  # per query, to 1e-12
        ref = theirs.call()[0]  # and the means ndcg_score returns
        assert abs(ours - ref) <= P.TOLERANCE, (ours, ref)
    return fast, y_true.shape


def _dense_case(shape, ignore_ties: bool) -> str:
    return f"{shape[0]}x{shape[1]} {'ignore_ties (tie-free data)' if ignore_ties else 'tie-aware'}"


@pytest.mark.benchmark(group="sklearn-dense")
@pytest.mark.parametrize("ignore_ties", [False, True], ids=["tie-aware", "ignore-ties"])
def test_dense_fastndcg(benchmark, dense_inputs, ignore_ties):
    runner, shape = _dense_pair(dense_inputs, ignore_ties)
    result = timed(benchmark, runner, warm=False, case=_dense_case(shape, ignore_ties),
                   ignore_ties=ignore_ties)
    assert 0.0 <= result[0] <= 1.0


@pytest.mark.benchmark(group="sklearn-dense")
@pytest.mark.parametrize("ignore_ties", [False, True], ids=["tie-aware", "ignore-ties"])
def test_dense_sklearn(benchmark, dense_inputs, ignore_ties):
    P.require("sklearn")
    _dense_pair(dense_inputs, ignore_ties)  # the check, and the warm-up calls
    y_true, y_score = dense_inputs[ignore_ties]
    runner = P.sklearn_dense(y_true, y_score, None, ignore_ties=ignore_ties)
    timed(benchmark, runner, rounds=SLOW_ROUNDS, warm=False,
          case=_dense_case(y_true.shape, ignore_ties), ignore_ties=ignore_ties)


# --------------------------------------------------------------------------- ranx

@pytest.fixture(scope="module", params=_params(RANX_QUERIES, lambda n: n >= HEAVY_RANX_QUERIES,
                                               ids=lambda n: f"{n:.0e}"))
def ranx_data(request) -> tuple[P.QrelsRun, np.ndarray]:
    """Tie-free run of ~50 rows per query, judged, plus unretrieved judged documents;
    and fastndcg's answer (its warm-up call)."""
    scores, labels, offsets = _data.ragged(request.param, 50, tie_free=True)
    data = P.qrels_run(scores, labels, offsets, unretrieved=RANX_UNRETRIEVED)
    return data, P.fastndcg_qrels(data, K).per_query()


@pytest.mark.benchmark(group="ranx")
def test_ranx_fastndcg_qrels(benchmark, ranx_data):
    data = ranx_data[0]
    timed(benchmark, P.fastndcg_qrels(data, K), warm=False, case=f"{data.n_queries:.0e}", k=K)


@pytest.mark.benchmark(group="ranx")
@pytest.mark.parametrize("what", ["end-to-end", "evaluate"])
def test_ranx_peer(benchmark, ranx_data, what):
    P.require("ranx")
    data, expected = ranx_data
    runner = (P.ranx_end_to_end if what == "end-to-end" else P.ranx_evaluate)(data, K)
    P.assert_same(expected, runner.per_query(),
                  what=f"{runner.system} vs fastndcg (tie-free scores)")
    timed(benchmark, runner, rounds=SLOW_ROUNDS, warm=False, case=f"{data.n_queries:.0e}", k=K)


@pytest.fixture(scope="module", params=_params(RANX_QUERIES, lambda n: n >= HEAVY_RANX_QUERIES,
                                               ids=lambda n: f"{n:.0e}"))
def ranx_log(request, tmp_path_factory):
    """A tie-free Parquet log (string ids, float64 scores, int64 labels) and its queries."""
    scores, labels, offsets = _data.ragged(request.param, 50, tie_free=True, seed=1)
    data = P.qrels_run(scores, labels, offsets)
    path = P.write_log_parquet(data, tmp_path_factory.mktemp("bench-peers") / "log.parquet")
    fast = P.fastndcg_log(path, K, data.query_ids)
    return path, data, fast, fast.per_query()  # the warm-up call


@pytest.mark.benchmark(group="ranx-parquet")
def test_parquet_fastndcg(benchmark, ranx_log):
    _, data, fast, _ = ranx_log
    timed(benchmark, fast, warm=False, case=f"{data.n_queries:.0e}", k=K)


@pytest.mark.benchmark(group="ranx-parquet")
def test_parquet_ranx(benchmark, ranx_log):
    P.require("ranx")
    path, data, _, expected = ranx_log
    runner = P.ranx_log(path, K, data.n_rows, data.n_queries)
    P.assert_same(expected, runner.per_query(), what="ranx from Parquet vs fastndcg")
    timed(benchmark, runner, rounds=SLOW_ROUNDS, warm=False, case=f"{data.n_queries:.0e}", k=K)
